#![allow(clippy::unwrap_used)]

use super::*;

const UTILERIAS: &str = r#"<xsl:stylesheet xmlns:xsl="http://www.w3.org/1999/XSL/Transform" version="2.0"><xsl:template name="Requerido"><xsl:param name="valor"/>|<xsl:call-template name="ManejaEspacios"><xsl:with-param name="s" select="$valor"/></xsl:call-template></xsl:template><xsl:template name="Opcional"><xsl:param name="valor"/><xsl:if test="$valor">|<xsl:call-template name="ManejaEspacios"><xsl:with-param name="s" select="$valor"/></xsl:call-template></xsl:if></xsl:template><xsl:template name="ManejaEspacios"><xsl:param name="s"/><xsl:value-of select="normalize-space(string($s))"/></xsl:template></xsl:stylesheet>"#;

const MASTER: &str = r#"<xsl:stylesheet xmlns:xsl="http://www.w3.org/1999/XSL/Transform" xmlns:a="urn:a" version="2.0">
  <xsl:include href="u/utilerias.xslt"/>
  <xsl:template match="/">|<xsl:apply-templates select="/a:R"/>||</xsl:template>
  <xsl:template match="a:R">
    <xsl:call-template name="Requerido"><xsl:with-param name="valor" select="./@X"/></xsl:call-template>
    <xsl:call-template name="Opcional"><xsl:with-param name="valor" select="./@Y"/></xsl:call-template>
    <xsl:for-each select="./a:C"><xsl:apply-templates select="."/></xsl:for-each>
    <xsl:if test="./@X='v'">|x-is-v</xsl:if>
    <xsl:for-each select="./a:Complemento/*"><xsl:apply-templates select="."/></xsl:for-each>
  </xsl:template>
  <xsl:template match="a:C">first</xsl:template>
  <xsl:template match="a:C"><xsl:call-template name="Requerido"><xsl:with-param name="valor" select="./@N"/></xsl:call-template></xsl:template>
</xsl:stylesheet>"#;

fn files(path: &str) -> Option<&'static str> {
    match path {
        "m/master.xslt" => Some(MASTER),
        "m/u/utilerias.xslt" => Some(UTILERIAS),
        _ => None,
    }
}

fn out(xml: &str) -> String {
    let sheet = compile(&files, "m/master.xslt").unwrap();
    let doc = roxmltree::Document::parse(xml).unwrap();
    run(&sheet, doc.root_element()).unwrap()
}

#[test]
fn required_optional_and_whitespace_follow_the_xslt() {
    // A missing required attribute leaves an empty field; a missing optional one none;
    // an empty optional one a field; values are normalize-space'd; the prefix is the
    // document's own, matched by namespace URI; the later of two templates applies.
    let xml =
        r#"<p:R xmlns:p="urn:a" Y="" X="  un   valor&#10;largo "><p:C N=" 1 "/><p:C N="2"/></p:R>"#;
    assert_eq!(out(xml), "||un valor largo||1|2||");
    assert_eq!(out(r#"<R xmlns="urn:a"/>"#), "||||");
    assert_eq!(out(r#"<R xmlns="urn:a" X="v"/>"#), "||v|x-is-v||");
}

#[test]
fn an_element_without_a_template_gives_its_text_as_xslt_does() {
    // XSLT's built-in rule: an unknown complement's text (even blanks) goes out.
    let xml = "<R xmlns=\"urn:a\" X=\"1\"><Complemento><o:U xmlns:o=\"urn:o\">\n  <o:V>t</o:V>\n</o:U></Complemento></R>";
    assert_eq!(out(xml), "||1\n  t\n||");
}

#[test]
fn unsupported_xslt_is_refused_when_compiled() {
    let bad = |_: &str| {
        Some(
            r#"<xsl:stylesheet xmlns:xsl="http://www.w3.org/1999/XSL/Transform"><xsl:template match="/"><xsl:number/></xsl:template></xsl:stylesheet>"#,
        )
    };
    assert!(compile(&bad, "x.xslt")
        .unwrap_err()
        .contains("unsupported <number>"));
    let bad_expr = |_: &str| {
        Some(
            r#"<xsl:stylesheet xmlns:xsl="http://www.w3.org/1999/XSL/Transform"><xsl:template match="/"><xsl:value-of select="count(.)"/></xsl:template></xsl:stylesheet>"#,
        )
    };
    assert!(compile(&bad_expr, "x.xslt").is_err());
}
