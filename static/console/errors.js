// The API's errors in the console's language. The API answers in English and stays as
// it is (a 422's `{errors: {field: [message]}}`, another status's `{message}`); here each
// field gets the label of the console's form control and each message its Spanish,
// matched by its text (the API's messages are fixed, a few with a value inside). A
// message this table does not know is shown as the API wrote it.
import { t, lang } from './i18n.js';

// Field name -> i18n key of the control's label.
const FIELDS = {
  tax_id: 'rfc', name: 'name', ciec_password: 'ciec', entity_id: 'entity', directions: 'directions',
  every: 'every_hint', daily_at: 'daily_at', lookback_days: 'lookback_days', status: 'status',
  monthly: 'monthly', 'monthly.day': 'monthly_day', 'monthly.at': 'monthly_at', 'monthly.months_before': 'months_before',
  document_classes: 'document_classes',
  certificate: 'cer_file', private_key: 'key_file', password: 'key_password',
  'options.period.from': 'from', 'options.period.to': 'to', 'options.download_type': 'download_type',
  'options.document_class': 'document_class', options: 'extraction_options', url: 'url', events: 'events',
  q: 'search', body: 'request_body',
  third_party_type: 'diot_third_party_type', operation_type: 'diot_operation_type', tax_effects: 'diot_tax_effects',
  border_region: 'diot_border_region', non_creditable: 'diot_non_creditable', foreign_tax_id: 'diot_foreign_tax_id',
  foreign_name: 'diot_foreign_name', country: 'diot_country', jurisdiction: 'diot_jurisdiction',
  legacy_country: 'diot_legacy_country', legacy_nationality: 'diot_legacy_nationality',
};

// [pattern, Spanish] in order; `$1`... are the pattern's groups.
const MESSAGES = [
  [/^can't be blank$/, 'no puede quedar vacío'],
  [/^must be a string$/, 'debe ser texto'],
  [/^must be 12 to 13 characters$/, 'debe tener 12 o 13 caracteres'],
  [/^must be an RFC: 3 or 4 letters \(A-Z, Ñ, &\), 6 digits and 3 letters or digits$/,
    'debe ser un RFC: 3 o 4 letras (A-Z, Ñ, &), 6 dígitos y 3 letras o dígitos'],
  [/^must be at most (\d+) characters$/, 'debe tener como máximo $1 caracteres'],
  [/^must be exactly (\d+) characters$/, 'debe tener exactamente $1 caracteres'],
  [/^cannot be changed$/, 'no se puede cambiar'],
  [/^has already been taken$/, 'ya está registrado'],
  [/^must be a UUID$/, 'no es un identificador válido'],
  [/^not found$/, 'no se encontró'],
  [/^give exactly one of every \(an interval\), daily_at \(HH:MM\) or monthly \(\{day, at\}\)$/,
    'indique una sola frecuencia: un intervalo, una hora diaria o un día del mes'],
  [/^months and years have no fixed length: .*$/,
    'los meses y los años no duran siempre lo mismo: para descargar cada mes elija «Mensual» (un día del mes y una hora de la Ciudad de México)'],
  [/^must be an object: .*$/, 'debe indicar el día del mes y la hora'],
  [/^must be a day of the month from 1 to 31 \(31 is a shorter month's last day\)$/,
    'debe ser un día del mes, de 1 a 31 (31 es el último día de los meses más cortos)'],
  [/^must be a whole number of months from 0 to (\d+)$/, 'debe ser un número entero de meses, de 0 a $1'],
  [/^applies to every and daily_at schedules; .*$/,
    'solo aplica a descargas diarias o por intervalo: una mensual descarga meses completos'],
  [/^must be a non-empty array of invoices and\/or retentions$/, 'elija al menos un tipo de documento: facturas o retenciones'],
  [/^must be an interval such as 6h, 90m or 1d$/, 'debe ser un intervalo como 6h, 90m o 1d'],
  [/^must be at least (.+)$/, 'debe ser de al menos $1'],
  [/^must be a whole number of seconds$/, 'debe ser un número entero de segundos'],
  [/^must be at most 31 days$/, 'debe ser de 31 días como máximo'],
  [/^must be a time HH:MM \(00:00 to 23:59\)$/, 'debe ser una hora HH:MM (00:00 a 23:59)'],
  [/^must be a whole number of days from 1 to (\d+)$/, 'debe ser un número entero de días, de 1 a $1'],
  [/^must be a non-empty array of issued and\/or received$/, 'elija al menos una dirección: emitidas o recibidas'],
  [/^already has a schedule at the same times for one of these directions and document classes .*$/,
    'ya tiene una descarga programada a las mismas horas para alguna de estas direcciones y documentos: modifique, pause o elimine esa'],
  [/^can't be changed; create a schedule for the other entity$/, 'no se puede cambiar: programe las descargas del otro contribuyente aparte'],
  [/^must be active or paused$/, 'debe estar vigente o en pausa'],
  [/^is too large for an e\.firma file \(64 KiB at most\)$/, 'es demasiado grande para un archivo de e.firma (64 KiB como máximo)'],
  [/^must be the file's contents in base64$/, 'debe ser el contenido del archivo en base64'],
  [/^does not belong to this certificate \(upload the \.key issued with this \.cer\)$/,
    'no corresponde a este certificado (suba la .key emitida con este .cer)'],
  [/^is not an X\.509 certificate in DER form \(the e\.firma's \.cer file\)$/,
    'no es un certificado X.509 en formato DER (el archivo .cer de la e.firma)'],
  [/^is a CSD \(sello digital\) certificate, not an e\.firma: upload the e\.firma's \.cer$/,
    'es un certificado de sello digital (CSD), no una e.firma: suba el .cer de la e.firma'],
  [/^carries no RFC: it is not a SAT e\.firma certificate$/, 'no lleva RFC: no es un certificado de e.firma del SAT'],
  [/^belongs to RFC (.+), not to this entity's tax_id (.+)$/, 'es del RFC $1, no del RFC de este contribuyente ($2)'],
  [/^is not valid yet: valid from (.+)$/, 'aún no es válido: vale desde el $1'],
  [/^expired on (.+)$/, 'venció el $1'],
  [/^does not hold an RSA public key$/, 'no contiene una llave pública RSA'],
  [/^is not an encrypted private key in DER form \(the e\.firma's \.key file\)$/,
    'no es una llave privada cifrada en formato DER (el archivo .key de la e.firma)'],
  [/^is encrypted with (\d+) PBKDF2 rounds; at most (\d+) are accepted.*$/,
    'está cifrada con $1 rondas de PBKDF2; se aceptan $2 como máximo (las llaves del SAT usan 2048): vuelva a cifrarla'],
  [/^is encrypted with a scheme the SAT's \.key files do not use \(expected PBES2 with PBKDF2\)$/,
    'está cifrada con un esquema que las llaves .key del SAT no usan (se espera PBES2 con PBKDF2)'],
  [/^does not decrypt the private key$/, 'no descifra la llave privada'],
  [/^is encrypted with a cipher this service does not support$/, 'está cifrada con un algoritmo que este servicio no admite'],
  [/^is not an RSA private key$/, 'no es una llave privada RSA'],
  [/^must be a date \(YYYY-MM-DD\).*$/, 'debe ser una fecha AAAA-MM-DD (del 0001-01-01 al 9999-12-31)'],
  [/^must be on or after 2004-01-01.*$/, 'debe ser a partir del 01/01/2004 (las primeras facturas electrónicas)'],
  [/^must be within a year from today.*$/, 'debe estar a menos de un año de hoy (ningún CFDI tiene una fecha posterior)'],
  [/^must be on or after options\.period\.from$/, 'debe ser igual o posterior a «Desde»'],
  [/^must be at most 6 years after options\.period\.from$/, 'debe estar a 6 años de «Desde» como máximo'],
  [/^must be issued or received$/, 'debe ser emitidas o recibidas'],
  [/^must be invoices or retentions$/, 'debe ser facturas o retenciones'],
  [/^retentions are extracted through the e\.firma web service only.*$/, 'las retenciones solo se descargan con la e.firma (el portal de la CIEC no las entrega): suba primero la e.firma del contribuyente'],
  [/^must be an absolute http or https URL with a host$/, 'debe ser una URL http o https completa, con servidor'],
  [/^must be one of (.+) for third-party type (\d+)$/, 'debe ser uno de: $1, para el tipo de tercero $2'],
  [/^must be 04, 05 or 15$/, 'debe ser 04, 05 o 15'],
  [/^is only for a foreign supplier \(third_party_type 05\)$/, 'solo aplica a un proveedor extranjero (tipo de tercero 05)'],
  [/^must be a foreign country's code in the SAT's c_Pais catalog.*$/,
    'debe ser la clave de un país extranjero del catálogo c_Pais del SAT (ISO de 3 letras; ZZZ para otro)'],
  [/^is only for country ZZZ$/, 'solo aplica con el país ZZZ'],
  [/^must not contain \| or line breaks$/, 'no debe contener | ni saltos de línea'],
  [/^must be two letters \(the 24-field layout's country catalog\)$/, 'debe ser de dos letras (el catálogo de países del formato de 24 campos)'],
  [/^must be an RFC: 3 or 4 letters, 6 digits and a 3-character homoclave.*$/,
    'debe ser un RFC: 3 o 4 letras, 6 dígitos y una homoclave de 3 caracteres (XEXX010101000 para un proveedor extranjero)'],
  [/^must be one of (.+)$/, 'debe ser uno de: $1'],
  [/^must be true or false$/, 'debe ser verdadero o falso'],
  [/^must be a JSON object$/, 'la solicitud no es un objeto JSON'],
  [/^is not valid JSON$/, 'la solicitud no es JSON válido'],
];

// Other errors by their status.
const STATUS = {
  404: 'El recurso no existe o no es de su organización.',
  413: 'La solicitud es demasiado grande.',
  429: 'Su organización tiene demasiadas tareas pesadas en curso: intente de nuevo en unos segundos.',
  500: 'Error interno del servicio. Intente de nuevo; si sigue, avise a quien opera el servicio.',
  503: 'El servicio no puede atender esto ahora: ',
};

const spanish = () => lang() === 'es-MX';

/** Where a field's errors go in a list: in the order of the forms' controls. */
export function fieldRank(name) {
  const i = Object.keys(FIELDS).indexOf(name);
  return i < 0 ? Object.keys(FIELDS).length : i;
}

/** A field's label in the console's language (its form control's), else its name. */
export function fieldLabel(name) {
  const key = FIELDS[name];
  const label = key ? t(key) : name;
  return label === key ? name : label;
}

/** An API field message in the console's language (Spanish when the table knows it). */
export function fieldMessage(message) {
  if (!spanish()) return message;
  const found = MESSAGES.find(([pattern]) => pattern.test(message));
  return found ? message.replace(found[0], found[1]) : message;
}

/** A failed call's message (not a 422): the status's words in Spanish, else the API's. */
export function failure(err) {
  if (!err) return '';
  if (err.status === 0) return t('network_error');
  if (!spanish() || !STATUS[err.status]) return err.message;
  if (err.status === 503) return STATUS[503] + (/status checks are off/.test(err.message) ? t('sat_checks_off') : err.message);
  return STATUS[err.status];
}
