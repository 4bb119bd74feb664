//! Fixed, fake reference data: counterparties, employees, products and
//! certification providers. Everything here is invented but shaped like the
//! real thing (RFC lengths, SAT catalog keys, uppercase names without the
//! company-type suffix, as CFDI 4.0 requires).

/// A fake taxpayer the entity deals with.
pub(super) struct Counterparty {
    pub rfc: &'static str,
    pub name: &'static str,
    pub regime: &'static str,
    pub zip: &'static str,
}

/// A fake employee, receiver of payroll CFDIs issued by the entity.
pub(super) struct Employee {
    pub rfc: &'static str,
    pub name: &'static str,
    pub curp: &'static str,
    pub nss: &'static str,
    pub zip: &'static str,
}

/// A product or service line that invoices pick items from.
pub(super) struct Product {
    pub clave: &'static str,
    pub unit: &'static str,
    pub unit_name: &'static str,
    pub description: &'static str,
    /// Unit price range in MXN cents.
    pub min_cents: i64,
    pub max_cents: i64,
    pub max_qty: u32,
}

const fn party(
    rfc: &'static str,
    name: &'static str,
    regime: &'static str,
    zip: &'static str,
) -> Counterparty {
    Counterparty {
        rfc,
        name,
        regime,
        zip,
    }
}

#[rustfmt::skip]
pub(super) const COMPANIES: &[Counterparty] = &[
    party("EKU9003173C9", "ESCUELA KEMPER URGATE", "601", "42501"),
    party("URE180429TM6", "UNIVERSIDAD ROBOTICA ESPAÑOLA", "601", "86991"),
    party("H&E951128469", "HERRERIA & ELECTRICOS", "601", "06002"),
    party("IIA040805DZ4", "INDISTRIA ILUMINADORA DE ALMACENES", "626", "62661"),
    party("IVD920810GU2", "INNOVACION VALOR Y DESARROLLO", "601", "63901"),
    party("XIA190128J61", "XENON INDUSTRIAL ARTICLES", "601", "76343"),
    party("EWE1709045U0", "ESCUELA WILSON ESQUIVEL", "601", "26015"),
    party("KIJ0906199R1", "KIJ DISTRIBUCIONES", "601", "59820"),
    party("TCM970625MB1", "TRANSPORTES DEL CENTRO MEXICANO", "601", "54080"),
    party("MAÑ080808QX3", "MAÑANA FRESCA ALIMENTOS", "601", "44100"),
    party("CSA010203K45", "COMERCIALIZADORA SIERRA ALTA", "601", "64000"),
    party("FAB150617HJ9", "FERRETERIA Y ACEROS DEL BAJIO", "601", "37000"),
    party("LOG991122PL7", "LOGISTICA OCCIDENTE GLOBAL", "601", "45010"),
    party("SDM0703145T2", "SERVICIOS DIGITALES MEXICANOS", "601", "03100"),
    party("CPE110905RT8", "CONSTRUCTORA PEÑASCO", "601", "83000"),
    party("B&C0402196N8", "BARRA & COCINA DEL NORTE", "601", "31000"),
    party("DMA0605239F1", "DISTRIBUIDORA MEDICA DEL ALTIPLANO", "601", "78000"),
    party("PAP8802294W3", "PAPELERIA Y ARTICULOS DE PUEBLA", "601", "72000"),
    party("TIN1311187A5", "TECNOLOGIA INTEGRAL DEL NORESTE", "601", "66220"),
    party("GAS050505GH6", "GASOLINERA AUTOPISTA DEL SOL", "601", "39010"),
];

pub(super) const EMPLOYEES: &[Employee] = &[
    Employee {
        rfc: "CACX7605101P8",
        name: "XOCHILT CASAS CHAVEZ",
        curp: "CACX760510MDFSHC09",
        nss: "12987605101",
        zip: "36257",
    },
    Employee {
        rfc: "FUNK671228PH6",
        name: "KARLA FUENTE NOLASCO",
        curp: "FUNK671228MJCNLR02",
        nss: "04916712281",
        zip: "01160",
    },
    Employee {
        rfc: "JUFA7608212V6",
        name: "ADRIANA JUAREZ FERNANDEZ",
        curp: "JUFA760821MDFRRD05",
        nss: "33957608215",
        zip: "01160",
    },
    Employee {
        rfc: "COSC8001137NA",
        name: "CARLOS CORTES SOTO",
        curp: "COSC800113HDFRTR04",
        nss: "11018001137",
        zip: "52176",
    },
    Employee {
        rfc: "MISC491214B86",
        name: "CECILIA MIRANDA SANCHEZ",
        curp: "MISC491214MDFRNC01",
        nss: "92844912141",
        zip: "01010",
    },
    Employee {
        rfc: "IAÑL750210963",
        name: "LUIS IAN ÑUZCO",
        curp: "IAXL750210HDFNZS07",
        nss: "56997502108",
        zip: "30067",
    },
    Employee {
        rfc: "GOMJ850412AB1",
        name: "JORGE GOMEZ MARTINEZ",
        curp: "GOMJ850412HNLMRR03",
        nss: "43108504127",
        zip: "64000",
    },
    Employee {
        rfc: "PEHL900101XY9",
        name: "LAURA PEREZ HERNANDEZ",
        curp: "PEHL900101MPLRRR08",
        nss: "21139001014",
        zip: "72000",
    },
];

const fn product(
    clave: &'static str,
    unit: &'static str,
    unit_name: &'static str,
    description: &'static str,
    price_range: (i64, i64),
    max_qty: u32,
) -> Product {
    Product {
        clave,
        unit,
        unit_name,
        description,
        min_cents: price_range.0,
        max_cents: price_range.1,
        max_qty,
    }
}

/// Goods and services sold on `I` invoices (the first 8 are goods, which `T`
/// transfers reuse).
#[rustfmt::skip]
pub(super) const PRODUCTS: &[Product] = &[
    product("43211503", "H87", "Pieza", "COMPUTADORA PORTATIL 14 PULGADAS", (1_200_000, 3_500_000), 3),
    product("43211708", "H87", "Pieza", "MOUSE INALAMBRICO", (15_000, 60_000), 20),
    product("14111507", "XPK", "Paquete", "PAPEL BOND CARTA PAQUETE 500 HOJAS", (9_000, 15_000), 50),
    product("50202301", "H87", "Pieza", "AGUA PURIFICADA GARRAFON 20 L", (3_500, 6_000), 30),
    product("26121600", "KGM", "Kilogramo", "CABLE DE COBRE CALIBRE 12", (18_000, 26_000), 40),
    product("25172504", "H87", "Pieza", "LLANTA RADIAL 205/55 R16", (180_000, 320_000), 4),
    product("31161500", "XBX", "Caja", "TORNILLO HEXAGONAL 1/2\" CAJA 100 PZAS", (25_000, 45_000), 10),
    product("15101514", "LTR", "Litro", "GASOLINA MAGNA", (2_300, 2_600), 60),
    product("80111604", "E48", "Unidad de servicio", "SERVICIO DE CONSULTORIA ADMINISTRATIVA", (500_000, 4_000_000), 1),
    product("81112106", "E48", "Unidad de servicio", "SERVICIO DE HOSPEDAJE EN LA NUBE", (90_000, 600_000), 1),
    product("72101516", "E48", "Unidad de servicio", "MANTENIMIENTO DE AIRE ACONDICIONADO", (150_000, 900_000), 2),
    product("78101802", "E48", "Unidad de servicio", "FLETE LOCAL", (80_000, 450_000), 3),
    product("82141502", "E48", "Unidad de servicio", "SERVICIO DE DISEÑO GRÁFICO", (250_000, 1_500_000), 1),
    product("86101700", "E48", "Unidad de servicio", "CURSO DE CAPACITACIÓN EN SEGURIDAD", (300_000, 1_200_000), 1),
    product("90101501", "E48", "Unidad de servicio", "CONSUMO DE ALIMENTOS", (20_000, 350_000), 1),
];

/// How many of `PRODUCTS` are physical goods (listed first).
pub(super) const GOODS: usize = 8;

/// Lines of `E` credit notes.
#[rustfmt::skip]
pub(super) const CREDITS: &[Product] = &[
    product("84111506", "ACT", "Actividad", "DEVOLUCIÓN DE MERCANCÍA", (10_000, 400_000), 1),
    product("84111506", "ACT", "Actividad", "BONIFICACION POR VOLUMEN DE COMPRA", (10_000, 250_000), 1),
    product("84111506", "ACT", "Actividad", "DESCUENTO POR PRONTO PAGO", (5_000, 150_000), 1),
];

/// Authorized certification providers (PAC) that stamp the sandbox CFDIs.
pub(super) const PACS: &[&str] = &[
    "SAT970701NN3",
    "TBN040609RKA",
    "SPR190613I52",
    "LSO1306189R5",
];

/// Payment forms (c_FormaPago) used for paid-in-one-go invoices and payments.
pub(super) const PAYMENT_FORMS: &[&str] = &["01", "02", "03", "03", "03", "04", "28"];

/// Receiver uses (c_UsoCFDI) for `I` invoices.
pub(super) const INCOME_USES: &[&str] = &["G01", "G03", "G03", "I04"];
