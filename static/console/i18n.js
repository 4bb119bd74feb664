// The console's strings: es-MX by default, English on request. The choice is kept in
// localStorage (it is not a secret).
const es = {
  skip: 'Saltar al contenido', lang_switch: 'English', signout: 'Cerrar sesión', nav: 'Secciones',
  signin_title: 'Iniciar sesión', email: 'Correo electrónico', password: 'Contraseña', signin: 'Entrar',
  bad_credentials: 'Correo o contraseña incorrectos.', session_expired: 'La sesión ya no es válida: vuelva a iniciar sesión.',
  network_error: 'No se pudo contactar al servicio.', signed_out: 'Sesión cerrada.',
  entities: 'Contribuyentes', extractions: 'Descargas', invoices: 'Facturas', webhooks: 'Webhooks',
  rfc: 'RFC', name: 'Nombre', ciec: 'Contraseña CIEC', ciec_new: 'Nueva CIEC (opcional)', credential: 'Estado CIEC',
  efirma: 'e.firma', add_entity: 'Agregar contribuyente', add: 'Agregar', save: 'Guardar', cancel: 'Cancelar',
  edit: 'Editar', edit_entity: 'Editar contribuyente', delete: 'Eliminar', actions: 'Acciones', none: 'Ninguno',
  pending: 'pendiente', valid: 'válida', invalid: 'inválida', expired: 'vencida', running: 'en curso',
  finished: 'terminada', failed: 'fallida', active: 'vigente', cancelled: 'cancelada',
  live_hint: 'El estado se actualiza solo cada pocos segundos.', saved: 'Guardado.', created: 'Creado.', deleted: 'Eliminado.',
  upload_efirma: 'Subir e.firma', cer_file: 'Certificado (.cer)', key_file: 'Llave privada (.key)', key_password: 'Contraseña de la llave',
  upload: 'Subir', serial: 'Número de serie', holder: 'Titular', issuer_name: 'Emisor del certificado', valid_from: 'Válida desde',
  valid_to: 'Válida hasta', status: 'Estado', no_efirma: 'Sin e.firma',
  new_extraction: 'Nueva descarga', entity: 'Contribuyente', from: 'Desde', to: 'Hasta', download_type: 'Tipo de descarga',
  issued: 'Emitidas', received: 'Recibidas', start: 'Iniciar', found: 'Encontradas', processed: 'Procesadas',
  created_at: 'Creada', finished_at: 'Terminada', reason: 'Motivo', waiting: 'En espera en el SAT', checks: 'consultas',
  next_check: 'siguiente consulta', period: 'Periodo', channel: 'Canal', any: 'Todos', direction: 'Dirección',
  issued_from: 'Emitida desde', issued_to: 'Emitida hasta', type: 'Tipo', payment_method: 'Método de pago',
  outstanding: 'Con saldo pendiente', outstanding_no: 'Sin saldo pendiente', issuer_rfc: 'RFC emisor', receiver_rfc: 'RFC receptor',
  filter: 'Filtrar', clear: 'Limpiar', date: 'Fecha', folio: 'Serie-folio', issuer: 'Emisor', receiver: 'Receptor',
  total: 'Total', due: 'Saldo', open: 'Abrir', next_page: 'Página siguiente', prev_page: 'Página anterior', no_results: 'Sin resultados.',
  invoice: 'Factura', back: 'Volver a facturas', download_xml: 'Descargar XML', download_pdf: 'Descargar PDF', no_pdf: 'Sin PDF',
  uuid: 'UUID', issued_at: 'Fecha de emisión (SAT)', certified_at: 'Fecha de certificación (SAT)', currency: 'Moneda',
  exchange_rate: 'Tipo de cambio', payment_form: 'Forma de pago', cfdi_use: 'Uso CFDI', tax_regime: 'Régimen fiscal',
  concepts: 'Conceptos', product_code: 'Clave', description: 'Descripción', quantity: 'Cantidad', unit: 'Unidad',
  unit_price: 'Valor unitario', discount: 'Descuento', amount: 'Importe', taxes: 'Importes e impuestos', subtotal: 'Subtotal',
  taxes_transferred: 'Impuestos trasladados', taxes_withheld: 'Impuestos retenidos', paid: 'Pagado', payments: 'Pagos recibidos',
  payments_in: 'Pagos que contiene este complemento', related: 'Documentos relacionados', installment: 'Parcialidad',
  previous_balance: 'Saldo anterior', amount_paid: 'Importe pagado', outstanding_balance: 'Saldo insoluto', paid_at: 'Fecha de pago',
  items_truncated: 'Se muestran los primeros 1,000 conceptos.', conflicts: 'Hay pagos en conflicto para esta factura.',
  url: 'URL', events: 'Eventos', add_webhook: 'Agregar webhook', token: 'Token de firma', deliveries: 'Entregas',
  attempts: 'Intentos', response: 'Respuesta', last_error: 'Último error', last_attempt: 'Último intento', event: 'Evento',
  confirm_delete: '¿Eliminar este webhook?', show_deliveries: 'Ver entregas', token_once: 'Guarde este token: firma cada entrega.',
  mx_time: 'hora de la Ciudad de México', loading: 'Cargando…', downloaded: 'Descargado', not_found: 'No encontrado.',
  page_title: 'Consola', yes: 'Sí', no: 'No',
};
const en = {
  skip: 'Skip to content', lang_switch: 'Español', signout: 'Sign out', nav: 'Sections',
  signin_title: 'Sign in', email: 'Email', password: 'Password', signin: 'Sign in',
  bad_credentials: 'Wrong email or password.', session_expired: 'The session is no longer valid: sign in again.',
  network_error: 'The service could not be reached.', signed_out: 'Signed out.',
  entities: 'Taxpayers', extractions: 'Extractions', invoices: 'Invoices', webhooks: 'Webhooks',
  rfc: 'RFC', name: 'Name', ciec: 'CIEC password', ciec_new: 'New CIEC (optional)', credential: 'CIEC status',
  efirma: 'e.firma', add_entity: 'Add taxpayer', add: 'Add', save: 'Save', cancel: 'Cancel',
  edit: 'Edit', edit_entity: 'Edit taxpayer', delete: 'Delete', actions: 'Actions', none: 'None',
  pending: 'pending', valid: 'valid', invalid: 'invalid', expired: 'expired', running: 'running',
  finished: 'finished', failed: 'failed', active: 'active', cancelled: 'cancelled',
  live_hint: 'Status refreshes by itself every few seconds.', saved: 'Saved.', created: 'Created.', deleted: 'Deleted.',
  upload_efirma: 'Upload e.firma', cer_file: 'Certificate (.cer)', key_file: 'Private key (.key)', key_password: 'Key password',
  upload: 'Upload', serial: 'Serial number', holder: 'Holder', issuer_name: 'Certificate issuer', valid_from: 'Valid from',
  valid_to: 'Valid to', status: 'Status', no_efirma: 'No e.firma',
  new_extraction: 'New extraction', entity: 'Taxpayer', from: 'From', to: 'To', download_type: 'Download type',
  issued: 'Issued', received: 'Received', start: 'Start', found: 'Found', processed: 'Processed',
  created_at: 'Created', finished_at: 'Finished', reason: 'Reason', waiting: 'Waiting at the SAT', checks: 'checks',
  next_check: 'next check', period: 'Period', channel: 'Channel', any: 'Any', direction: 'Direction',
  issued_from: 'Issued from', issued_to: 'Issued to', type: 'Type', payment_method: 'Payment method',
  outstanding: 'With a balance due', outstanding_no: 'Nothing due', issuer_rfc: 'Issuer RFC', receiver_rfc: 'Receiver RFC',
  filter: 'Filter', clear: 'Clear', date: 'Date', folio: 'Series-folio', issuer: 'Issuer', receiver: 'Receiver',
  total: 'Total', due: 'Due', open: 'Open', next_page: 'Next page', prev_page: 'Previous page', no_results: 'No results.',
  invoice: 'Invoice', back: 'Back to invoices', download_xml: 'Download XML', download_pdf: 'Download PDF', no_pdf: 'No PDF',
  uuid: 'UUID', issued_at: 'Issued (SAT)', certified_at: 'Certified (SAT)', currency: 'Currency',
  exchange_rate: 'Exchange rate', payment_form: 'Payment form', cfdi_use: 'CFDI use', tax_regime: 'Tax regime',
  concepts: 'Concepts', product_code: 'Code', description: 'Description', quantity: 'Quantity', unit: 'Unit',
  unit_price: 'Unit price', discount: 'Discount', amount: 'Amount', taxes: 'Amounts and taxes', subtotal: 'Subtotal',
  taxes_transferred: 'Taxes transferred', taxes_withheld: 'Taxes withheld', paid: 'Paid', payments: 'Payments received',
  payments_in: 'Payments in this complement', related: 'Related documents', installment: 'Installment',
  previous_balance: 'Previous balance', amount_paid: 'Amount paid', outstanding_balance: 'Outstanding balance', paid_at: 'Paid at',
  items_truncated: 'The first 1,000 concepts are shown.', conflicts: 'There are conflicting payments for this invoice.',
  url: 'URL', events: 'Events', add_webhook: 'Add webhook', token: 'Signing token', deliveries: 'Deliveries',
  attempts: 'Attempts', response: 'Response', last_error: 'Last error', last_attempt: 'Last attempt', event: 'Event',
  confirm_delete: 'Delete this webhook?', show_deliveries: 'Show deliveries', token_once: 'Keep this token: it signs every delivery.',
  mx_time: 'Mexico City time', loading: 'Loading…', downloaded: 'Downloaded', not_found: 'Not found.',
  page_title: 'Console', yes: 'Yes', no: 'No',
};
const dictionaries = { 'es-MX': es, en };

export function lang() {
  const saved = localStorage.getItem('cfdi.lang');
  return saved in dictionaries ? saved : 'es-MX';
}
export function setLang(code) {
  localStorage.setItem('cfdi.lang', code);
  document.documentElement.lang = code;
}
/** The string for `key` in the current language (the key itself if unknown, so a gap shows). */
export function t(key) {
  return dictionaries[lang()][key] ?? es[key] ?? key;
}
