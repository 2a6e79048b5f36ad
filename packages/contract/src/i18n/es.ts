import type { Messages } from './en.ts';

export const es: Messages = {
  success: 'Éxito',
  unknown_error: 'Se ha producido un error desconocido',
  server_error: 'El servidor no respondió, inténtelo de nuevo más tarde.',
  network_unstable: 'La red es inestable, inténtelo de nuevo más tarde.',
  not_found: 'No encontrado.',
  route_not_found: 'No existe esta llamada a la API: {method} {path}',
  path_not_exist: 'La ruta no existe.',
  invalid_request: 'La solicitud no es válida: {detail}',
  invalid_json: 'El cuerpo de la solicitud no es un JSON válido.',
  body_too_large: 'El cuerpo de la solicitud es demasiado grande.',
  field_required: '{field} es obligatorio.',
  field_invalid: '{field} no es válido.',
  too_many_requests: 'Demasiadas solicitudes, inténtelo de nuevo más tarde.',
  unauthenticated: 'Inicie sesión primero.',
  session_expired: 'Su sesión ha caducado, vuelva a iniciar sesión.',
  email_format: 'Formato de correo electrónico incorrecto.',
  email_empty: 'El correo electrónico no puede estar vacío',
  password_too_short: 'La contraseña debe tener al menos {min} caracteres.',
  account_exists: 'Ya existe una cuenta con este correo electrónico.',
  login_failed: 'El correo electrónico o la contraseña son incorrectos.',
  login_rate_limited: 'Demasiados intentos de inicio de sesión, inténtelo de nuevo dentro de {minutes} minutos.',
  notify_email_saved: 'Configuración de notificaciones guardada.',
  license_expired: 'Su licencia actual ha caducado.',
  traffic_insufficient:
    'Sus datos de transferencia restantes son insuficientes. Puede obtener datos adicionales comprando un paquete de datos',
  traffic_needed: 'No hay suficiente tráfico disponible, se necesitan {size} en total',
  transaction_cap: 'Se ha superado el límite de transacciones; consulte la página Límites y alertas para aumentarlo',
  premium_required: 'Esta función está disponible con una licencia premium.',
  cloud_auth_expired: 'La autorización ha caducado, vuelva a autorizar.',
  cloud_already_bound: 'Esta unidad en la nube ya está vinculada',
  cloud_limit_reached: 'Ha alcanzado el número máximo de unidades en la nube; organícelas en Gestión.',
  cloud_free_limit_reached:
    'Una cuenta gratuita puede conectar hasta {max} unidades en la nube. Actualice para conectar más.',
  cloud_kind_unknown: 'Tipo de unidad en la nube desconocido: {kind}',
  cloud_kind_unavailable: '{kind} no está disponible en este servidor: {reason}',
  cloud_credentials_invalid: 'El nombre del bucket, el ID o la clave son incorrectos, inténtelo de nuevo',
  cloud_connect_failed: 'No se pudo conectar con la unidad en la nube: {reason}',
  cloud_login_invalid: 'La dirección, el nombre de usuario o la contraseña son incorrectos, inténtelo de nuevo',
  cloud_oauth_only: '{kind} se conecta a través de su propia ventana de inicio de sesión.',
  oauth_state_invalid: 'La solicitud de inicio de sesión ha caducado o no es válida; inténtelo de nuevo.',
  oauth_denied: 'No se concedió acceso a {kind}.',
  oauth_failed: '{kind} rechazó el inicio de sesión: {reason}',
  oauth_other_account:
    'Esta nube pertenece a otra cuenta de {kind}; inicie sesión con la misma cuenta para volver a autorizarla.',
  cloud_reauthorize_other:
    'Estas credenciales son de otra unidad en la nube. Conéctela como una nueva unidad en la nube.',
  cloud_operation_error: '¡Error en la operación de la unidad en la nube! [{code}]',
  cloud_unreachable: 'No se pudo acceder a la unidad en la nube, inténtelo de nuevo más tarde.',
  cloud_read_only: 'Esta unidad en la nube no permite esta operación.',
  bucket_empty: 'El nombre del bucket no puede estar vacío.',
  access_key_empty: 'El ID de clave de acceso no puede estar vacío.',
  secret_key_empty: 'La clave de acceso secreta no puede estar vacía.',
  name_empty: 'El nombre no puede estar vacío.',
  name_forbidden_chars: 'Un nombre no puede contener ninguno de estos caracteres: / : * ? \\ " < > |',
  name_dot: 'Un nombre no puede ser «.» ni «..».',
  name_trailing_space: 'Un nombre no puede terminar en un espacio.',
  name_too_long: 'El nombre es demasiado largo.',
  name_control_chars: 'Un nombre no puede contener caracteres de control.',
  already_exists: 'Ya existe un archivo o una carpeta con este nombre.',
  insufficient_space: '¡Espacio insuficiente en {cloud_name}!',
  insufficient_target_storage: 'Almacenamiento insuficiente en la nube de destino',
  select_files_first: 'Seleccione primero los archivos',
  same_path: 'La ruta de destino no puede ser igual a la ruta de origen.',
  target_not_folder: 'La ruta de destino es un archivo, no una carpeta.',
  confirm_same_cloud: 'El origen y el destino son la misma unidad en la nube. ¿Continuar?',
  confirm_deletions:
    'Esta sincronización eliminaría {count} de {total} archivos en el destino. Confirme para continuar.',
  confirm_deletions_source:
    'Esta sincronización eliminaría {count} de {total} archivos en el origen. Confirme para continuar.',
  photos_only_media: 'Solo se pueden migrar imágenes y vídeos a una nube de fotos.',
  task_not_found: 'La tarea no existe.',
  task_running: 'La tarea está en curso; cancélela primero.',
  task_not_retryable: 'Esta tarea no tiene ninguna parte fallida que retransmitir.',
  schedule_invalid: 'La programación no es válida: {detail}',
  schedule_in_past: 'La hora programada ya ha pasado.',
  cleanup_delete_last_copy:
    'Seleccione cada copia explícitamente para eliminar todas las copias de un archivo duplicado.',
  cleanup_scan_running: 'El análisis todavía está en curso; espere a que termine.',
  cleanup_deletion_running:
    'Ya se está eliminando contenido de este análisis; espere a que termine e inténtelo de nuevo.',
  feedback_details_empty: 'Los detalles no pueden estar vacíos',
  feedback_problem_type_empty: 'El tipo de problema no puede estar vacío',
  local_path_not_allowed: 'Esta carpeta está fuera de las carpetas que permite el servidor: {roots}',
  host_key_changed:
    'El servidor {host} presentó una clave de host distinta de la de la primera conexión. Se rechaza la conexión.',
  tls_fingerprint_mismatch:
    'El servidor {host} presentó un certificado TLS con la huella SHA-256 {fingerprint}, que no es la introducida. No se envió la contraseña.',
  tls_certificate_untrusted:
    'El servidor {host} presentó un certificado TLS que no es de confianza (¿autofirmado?). Introduzca su huella SHA-256 para confiar en él.',
  // Sessions and sign-in (issue 34).
  host_not_allowed:
    'Este servidor no responde en la dirección {host}. Ábralo en su dirección configurada o pida al operador que añada este nombre a SKYFERRY_ALLOWED_HOSTS.',
  login_slowed:
    'Demasiados inicios de sesión fallidos desde aquí para esta cuenta. Espere {seconds} segundos e inténtelo de nuevo.',
  bind_requires_sign_in:
    'Para conservar estas nubes, vuelva a iniciar sesión en este navegador y asócielas de inmediato.',
  local_visitor_refused:
    'Las carpetas del servidor no están disponibles para los visitantes. Inicie sesión con una cuenta a la que el operador haya permitido usarlas.',
  local_not_granted:
    'Solo el operador, y los usuarios a los que él lo permite, pueden usar carpetas del servidor. Pida acceso al operador.',
  local_no_roots:
    'No hay ninguna carpeta de este servidor configurada para esto: la carpeta personal solo se ofrece mientras el servidor tiene una única cuenta. Consulte al operador.',
  operator_only: 'Solo el operador del servidor puede hacer esto.',
  local_folder_taken: 'Otro usuario ya tiene la carpeta {name}.',
  cloud_address_not_allowed:
    'Skyferry no se conecta a este servidor: su dirección está en una red de loopback, privada o reservada. El operador del servidor puede permitir esas redes (SKYFERRY_ALLOW_PRIVATE_NETWORKS).',
  // Tasks page: runs, verification, editing (issue 35).
  run_not_found: 'Esta ejecución no está en el historial de la tarea.',
  upload_lost: 'El servidor que recibía esta subida se detuvo antes de terminarla; vuelva a empezar la subida.',
  verify_running: 'Ya se está verificando esta tarea; espere a que termine.',
  task_edit_running:
    'Lo que hacen las ejecuciones no puede cambiar mientras la tarea se ejecuta; espere a que termine la ejecución o cancélela.',
  confirm_edit_deletions: 'Con estos ajustes, la próxima ejecución eliminaría {count} archivos. Confirme para guardar.',
  field_not_for_task: '{field} no se aplica a esta tarea.',
  // Account basics.
  password_incorrect: 'La contraseña es incorrecta.',
  password_unchanged: 'La nueva contraseña debe ser distinta de la actual.',
  password_changed: 'Su contraseña se ha cambiado. Se ha cerrado la sesión en sus otros dispositivos.',
  email_same: 'Este ya es el correo electrónico de su cuenta.',
  email_change_sent: 'Hemos enviado un enlace a {email}. Ábralo para confirmar su nueva dirección.',
  email_changed: 'Su correo electrónico ahora es {email}.',
  reset_link_sent:
    'Si alguna cuenta usa esta dirección, se le ha enviado un enlace para establecer una nueva contraseña.',
  account_link_invalid: 'Este enlace ha caducado o ya se ha usado. Solicite uno nuevo.',
  password_reset_done: 'Se ha establecido su nueva contraseña. Inicie sesión con ella.',
  operator_successor_required:
    'Usted es el único operador de este servidor. Indique otra cuenta que pase a ser operadora antes de eliminar la suya.',
  operator_successor_unknown: 'Ninguna otra cuenta de este servidor usa la dirección {email}.',
  account_deleted: 'Su cuenta se ha eliminado.',
  kind_not_set_up: 'No configurado en este servidor.',
  kind_not_available: 'Todavía no disponible en este servidor.',
  // Support: feedback tickets, release notes (issue 39).
  details_empty: 'Los detalles no pueden estar vacíos',
  problem_type_empty: 'El tipo de problema no puede estar vacío',
  problem_type_invalid: 'Elige uno de los tipos de problema de la lista.',
  ticket_sent: '¡Gracias! Tu mensaje se ha enviado al operador de este servidor.',
  problem_type: 'Tipo de problema',
  pt_transfer: 'Migrar o sincronizar',
  pt_connect: 'Conectar una nube',
  pt_account: 'Cuenta e inicio de sesión',
  pt_bug: 'Algo no funciona',
  pt_idea: 'Una sugerencia',
  pt_other: 'Otro asunto',
  attachment_invalid:
    'No se puede adjuntar el archivo {name}: solo registros (.txt, .log) y capturas de pantalla (.png, .jpg) de hasta 2 MB cada uno, 3 como máximo.',
  release_notes_unknown: 'No hay notas de la versión {version}.',
  invalid_filter: 'Esta regla o valor de filtro no es válido: {rule}',
  // The app registry and its apps (issue 37).
  file_changed_meanwhile:
    'El archivo cambió desde que se abrió. Guarde su trabajo con otro nombre o vuelva a abrir el archivo.',
  app_not_found: 'Esta aplicación no está registrada en este servidor.',
  app_token_invalid: 'La aplicación ya no puede acceder a este archivo: ábralo de nuevo.',
  app_cannot_write: 'Esta aplicación solo puede leer el archivo.',
  app_function_origin: 'Cada función debe estar en la dirección de la propia aplicación ({origin}).',
  image_convert_failed: 'No se pudo convertir la imagen: {detail}',
  // Buying (issue 38).
  billing_unavailable: 'La compra no está disponible en este servidor.',
  packet_needs_license: 'Los paquetes de datos solo funcionan con una licencia activa: compre primero una licencia.',
  order_not_refundable:
    'Esta compra ya no se puede reembolsar: el reembolso completo se aplica dentro de los {days} días posteriores al pago.',
  survey_answered: 'Ya ha respondido el cuestionario.',
  // Exports (issue 37).
  export_too_large: 'El archivo es demasiado grande para exportarlo: {max} como máximo.',
  export_size_mismatch: 'El archivo no tenía el tamaño anunciado.',
  export_download_failed: 'No se pudo descargar el archivo (HTTP {status}).',
  export_too_many_redirects: 'La dirección de descarga redirige demasiadas veces.',
  wopi_lock_mismatch: 'El documento está bloqueado por otro editor.',
};
