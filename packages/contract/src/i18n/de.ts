import type { Messages } from './en.ts';

export const de: Messages = {
  success: 'Erfolgreich',
  unknown_error: 'Ein unbekannter Fehler ist aufgetreten',
  server_error: 'Der Server hat nicht geantwortet, bitte versuchen Sie es später erneut.',
  network_unstable: 'Das Netzwerk ist instabil, bitte versuchen Sie es später erneut.',
  not_found: 'Nicht gefunden.',
  route_not_found: 'Diesen API-Aufruf gibt es nicht: {method} {path}',
  path_not_exist: 'Der Pfad existiert nicht.',
  invalid_request: 'Die Anfrage ist ungültig: {detail}',
  invalid_json: 'Der Anfrageinhalt ist kein gültiges JSON.',
  body_too_large: 'Der Anfrageinhalt ist zu groß.',
  field_required: '{field} ist erforderlich.',
  field_invalid: '{field} ist ungültig.',
  too_many_requests: 'Zu viele Anfragen, bitte versuchen Sie es später erneut.',
  unauthenticated: 'Bitte melden Sie sich zuerst an.',
  session_expired: 'Ihre Sitzung ist abgelaufen, bitte melden Sie sich erneut an.',
  email_format: 'Ungültiges E-Mail-Format.',
  email_empty: 'Die E-Mail-Adresse darf nicht leer sein',
  password_too_short: 'Das Passwort muss mindestens {min} Zeichen haben.',
  account_exists: 'Es gibt bereits ein Konto mit dieser E-Mail-Adresse.',
  login_failed: 'E-Mail-Adresse oder Passwort ist falsch.',
  login_rate_limited: 'Zu viele Anmeldeversuche, bitte versuchen Sie es in {minutes} Minuten erneut.',
  notify_email_saved: 'Benachrichtigungseinstellungen gespeichert.',
  license_expired: 'Ihre aktuelle Lizenz ist abgelaufen.',
  traffic_insufficient:
    'Ihr verbleibendes Übertragungsvolumen reicht nicht aus. Mit einem Datenpaket erhalten Sie zusätzliches Volumen',
  traffic_needed: 'Nicht genügend Datenvolumen verfügbar, insgesamt werden {size} benötigt',
  transaction_cap: 'Transaktionslimit überschritten. Erhöhen Sie Ihr Limit auf der Seite „Limits & Warnungen“',
  premium_required: 'Diese Funktion ist mit einer Premium-Lizenz verfügbar.',
  cloud_auth_expired: 'Die Autorisierung ist abgelaufen, bitte autorisieren Sie erneut.',
  cloud_already_bound: 'Dieses Cloud-Laufwerk ist bereits verbunden',
  cloud_limit_reached:
    'Sie haben die maximale Anzahl an Cloud-Laufwerken erreicht, bitte ordnen Sie sie unter „Verwalten“.',
  cloud_free_limit_reached:
    'Ein kostenloses Konto kann bis zu {max} Cloud-Laufwerke verbinden. Führen Sie ein Upgrade durch, um mehr zu verbinden.',
  cloud_kind_unknown: 'Unbekannter Cloud-Laufwerkstyp: {kind}',
  cloud_kind_unavailable: '{kind} ist auf diesem Server nicht verfügbar: {reason}',
  cloud_credentials_invalid: 'Bucket-Name, ID oder Schlüssel ist falsch, bitte versuchen Sie es erneut',
  cloud_connect_failed: 'Verbindung zum Cloud-Laufwerk fehlgeschlagen: {reason}',
  cloud_login_invalid: 'Die Adresse, der Benutzername oder das Passwort ist falsch, bitte versuchen Sie es erneut',
  cloud_oauth_only: '{kind} wird über ein eigenes Anmeldefenster verbunden.',
  oauth_state_invalid: 'Die Anmeldeanfrage ist abgelaufen oder ungültig, bitte versuchen Sie es erneut.',
  oauth_denied: 'Der Zugriff auf {kind} wurde nicht gewährt.',
  oauth_failed: '{kind} hat die Anmeldung abgelehnt: {reason}',
  oauth_other_account:
    'Diese Cloud gehört zu einem anderen {kind}-Konto; melden Sie sich mit demselben Konto an, um sie erneut zu autorisieren.',
  cloud_reauthorize_other:
    'Diese Zugangsdaten gehören zu einem anderen Cloud-Speicher. Verbinden Sie ihn stattdessen als neuen Cloud-Speicher.',
  cloud_operation_error: 'Fehler bei der Cloud-Laufwerk-Operation! [{code}]',
  cloud_unreachable: 'Das Cloud-Laufwerk ist nicht erreichbar, bitte versuchen Sie es später erneut.',
  cloud_read_only: 'Dieses Cloud-Laufwerk erlaubt diesen Vorgang nicht.',
  bucket_empty: 'Der Bucket-Name darf nicht leer sein.',
  access_key_empty: 'Die Zugriffsschlüssel-ID darf nicht leer sein.',
  secret_key_empty: 'Der geheime Zugriffsschlüssel darf nicht leer sein.',
  name_empty: 'Der Name darf nicht leer sein.',
  name_forbidden_chars: 'Ein Name darf keines dieser Zeichen enthalten: / : * ? \\ " < > |',
  name_dot: 'Ein Name darf nicht „.“ oder „..“ sein.',
  name_trailing_space: 'Ein Name darf nicht mit einem Leerzeichen enden.',
  name_too_long: 'Der Name ist zu lang.',
  name_control_chars: 'Ein Name darf keine Steuerzeichen enthalten.',
  already_exists: 'Eine Datei oder ein Ordner mit diesem Namen existiert bereits.',
  insufficient_space: 'Nicht genügend Speicherplatz auf {cloud_name}!',
  insufficient_target_storage: 'Nicht genügend Speicherplatz im Ziel-Cloud-Laufwerk',
  select_files_first: 'Bitte wählen Sie zuerst Dateien aus',
  same_path: 'Der Zielpfad darf nicht mit dem Quellpfad übereinstimmen.',
  target_not_folder: 'Der Zielpfad ist eine Datei, kein Ordner.',
  confirm_same_cloud: 'Quelle und Ziel sind dasselbe Cloud-Laufwerk. Fortfahren?',
  confirm_deletions:
    'Diese Synchronisierung würde {count} von {total} Dateien im Ziel löschen. Bestätigen Sie, um fortzufahren.',
  confirm_deletions_source:
    'Diese Synchronisierung würde {count} von {total} Dateien in der Quelle löschen. Bestätigen Sie, um fortzufahren.',
  photos_only_media: 'Nur Bilder und Videos können in eine Foto-Cloud migriert werden.',
  task_not_found: 'Die Aufgabe existiert nicht.',
  task_running: 'Die Aufgabe läuft; brechen Sie sie zuerst ab.',
  task_not_retryable: 'Diese Aufgabe hat keinen fehlgeschlagenen Teil, der erneut übertragen werden kann.',
  schedule_invalid: 'Der Zeitplan ist ungültig: {detail}',
  schedule_in_past: 'Der geplante Zeitpunkt ist bereits vergangen.',
  cleanup_delete_last_copy: 'Wählen Sie jede Kopie ausdrücklich aus, um alle Kopien einer doppelten Datei zu löschen.',
  cleanup_scan_running: 'Die Suche läuft noch; warten Sie, bis sie abgeschlossen ist.',
  cleanup_deletion_running:
    'Für diese Suche läuft bereits ein Löschvorgang; warten Sie, bis er abgeschlossen ist, und versuchen Sie es erneut.',
  feedback_details_empty: 'Die Details dürfen nicht leer sein',
  feedback_problem_type_empty: 'Die Problemart darf nicht leer sein',
  local_path_not_allowed: 'Dieser Ordner liegt außerhalb der vom Server erlaubten Ordner: {roots}',
  host_key_changed:
    'Der Server {host} hat einen anderen Hostschlüssel vorgelegt als bei der ersten Verbindung. Die Verbindung wird verweigert.',
  tls_fingerprint_mismatch:
    'Der Server {host} hat ein TLS-Zertifikat mit dem SHA-256-Fingerabdruck {fingerprint} vorgelegt, nicht mit dem eingegebenen. Das Passwort wurde nicht gesendet.',
  tls_certificate_untrusted:
    'Der Server {host} hat ein nicht vertrauenswürdiges TLS-Zertifikat vorgelegt (selbst signiert?). Geben Sie seinen SHA-256-Fingerabdruck ein, um ihm zu vertrauen.',
  // Sessions and sign-in (issue 34).
  host_not_allowed:
    'Dieser Server antwortet nicht unter der Adresse {host}. Öffnen Sie ihn unter seiner eingerichteten Adresse oder bitten Sie den Betreiber, diesen Namen in SKYFERRY_ALLOWED_HOSTS aufzunehmen.',
  login_slowed:
    'Zu viele fehlgeschlagene Anmeldungen von hier für dieses Konto. Bitte warten Sie {seconds} Sekunden und versuchen Sie es erneut.',
  bind_requires_sign_in:
    'Um diese Cloud-Laufwerke zu behalten, melden Sie sich in diesem Browser erneut an und verknüpfen Sie sie sofort.',
  local_visitor_refused:
    'Ordner auf dem Server stehen Besuchern nicht zur Verfügung. Melden Sie sich mit einem Konto an, dem der Betreiber sie erlaubt hat.',
  local_not_granted:
    'Nur der Betreiber und die Benutzer, denen er es erlaubt, dürfen Ordner auf dem Server verwenden. Bitten Sie den Betreiber um Zugang.',
  local_no_roots:
    'Auf diesem Server ist dafür kein Ordner eingerichtet: Der Home-Ordner wird nur angeboten, solange der Server ein einziges Konto hat. Fragen Sie den Betreiber.',
  operator_only: 'Nur der Betreiber des Servers darf das tun.',
  local_folder_taken: 'Ein anderer Benutzer hat den Ordner {name} bereits.',
  cloud_address_not_allowed:
    'Skyferry verbindet sich nicht mit diesem Server: Seine Adresse liegt in einem Loopback-, privaten oder reservierten Netz. Der Betreiber des Servers kann solche Netze erlauben (SKYFERRY_ALLOW_PRIVATE_NETWORKS).',
  // Tasks page: runs, verification, editing (issue 35).
  run_not_found: 'Dieser Lauf ist nicht im Verlauf der Aufgabe.',
  upload_lost: 'Der Server, der diesen Upload empfing, wurde vor dessen Ende beendet; starten Sie den Upload erneut.',
  verify_running: 'Eine Überprüfung dieser Aufgabe läuft bereits; bitte warten Sie, bis sie fertig ist.',
  task_edit_running:
    'Was Läufe tun, kann nicht geändert werden, während die Aufgabe läuft; warten Sie das Ende des Laufs ab oder brechen Sie ihn ab.',
  confirm_edit_deletions:
    'Mit diesen Einstellungen würde der nächste Lauf {count} Dateien löschen. Zum Speichern bestätigen.',
  field_not_for_task: '{field} gilt nicht für diese Aufgabe.',
  // Account basics.
  password_incorrect: 'Das Passwort ist falsch.',
  password_unchanged: 'Das neue Passwort muss sich vom aktuellen unterscheiden.',
  password_changed: 'Ihr Passwort wurde geändert. Ihre anderen Geräte wurden abgemeldet.',
  email_same: 'Das ist bereits die E-Mail-Adresse Ihres Kontos.',
  email_change_sent: 'Wir haben einen Link an {email} gesendet. Öffnen Sie ihn, um Ihre neue Adresse zu bestätigen.',
  email_changed: 'Ihre E-Mail-Adresse lautet jetzt {email}.',
  reset_link_sent:
    'Wenn ein Konto diese Adresse verwendet, wurde ein Link zum Festlegen eines neuen Passworts an sie gesendet.',
  account_link_invalid: 'Dieser Link ist abgelaufen oder wurde bereits verwendet. Bitte fordern Sie einen neuen an.',
  password_reset_done: 'Ihr neues Passwort ist festgelegt. Melden Sie sich damit an.',
  operator_successor_required:
    'Sie sind der einzige Betreiber dieses Servers. Nennen Sie ein anderes Konto, das Betreiber wird, bevor Sie Ihres löschen.',
  operator_successor_unknown: 'Kein anderes Konto dieses Servers verwendet die Adresse {email}.',
  account_deleted: 'Ihr Konto wurde gelöscht.',
  kind_not_set_up: 'Auf diesem Server nicht eingerichtet.',
  kind_not_available: 'Auf diesem Server noch nicht verfügbar.',
  // Support: feedback tickets, release notes (issue 39).
  details_empty: 'Die Details dürfen nicht leer sein',
  problem_type_empty: 'Die Problemart darf nicht leer sein',
  problem_type_invalid: 'Wählen Sie eine der aufgeführten Problemarten.',
  ticket_sent: 'Danke! Ihre Nachricht wurde an den Betreiber dieses Servers gesendet.',
  problem_type: 'Problemart',
  pt_transfer: 'Migrieren oder Synchronisieren',
  pt_connect: 'Einen Cloud-Speicher verbinden',
  pt_account: 'Konto und Anmeldung',
  pt_bug: 'Etwas funktioniert nicht',
  pt_idea: 'Ein Vorschlag',
  pt_other: 'Etwas anderes',
  attachment_invalid:
    'Die Datei {name} kann nicht angehängt werden: nur Protokolldateien (.txt, .log) und Bildschirmfotos (.png, .jpg) bis je 2 MB, höchstens 3.',
  release_notes_unknown: 'Für Version {version} gibt es keine Versionshinweise.',
  invalid_filter: 'Diese Filterregel oder dieser Wert ist ungültig: {rule}',
  // The app registry and its apps (issue 37).
  file_changed_meanwhile:
    'Die Datei wurde seit dem Öffnen geändert. Speichern Sie Ihre Arbeit unter einem anderen Namen oder öffnen Sie die Datei erneut.',
  app_not_found: 'Diese App ist auf diesem Server nicht registriert.',
  app_token_invalid: 'Die App darf diese Datei nicht mehr lesen: Öffnen Sie sie erneut.',
  app_cannot_write: 'Diese App darf die Datei nur lesen.',
  app_function_origin: 'Jede Funktion muss unter der Adresse der App liegen ({origin}).',
  image_convert_failed: 'Das Bild konnte nicht umgewandelt werden: {detail}',
  // Buying (issue 38).
  billing_unavailable: 'Kaufen ist auf diesem Server nicht verfügbar.',
  packet_needs_license: 'Datenpakete gelten nur mit einer aktiven Lizenz: Kaufen Sie zuerst eine Lizenz.',
  order_not_refundable:
    'Dieser Kauf kann nicht mehr erstattet werden: Die volle Erstattung gilt innerhalb von {days} Tagen nach der Zahlung.',
  survey_answered: 'Sie haben den Fragebogen bereits beantwortet.',
  // Exports (issue 37).
  export_too_large: 'Die Datei ist zu groß für den Export: höchstens {max}.',
  export_size_mismatch: 'Die Datei hatte nicht die angekündigte Größe.',
  export_download_failed: 'Die Datei konnte nicht heruntergeladen werden (HTTP {status}).',
  export_too_many_redirects: 'Die Download-Adresse leitet zu oft weiter.',
  wopi_lock_mismatch: 'Das Dokument ist von einem anderen Editor gesperrt.',
};
