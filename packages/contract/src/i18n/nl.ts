import type { Messages } from './en.ts';

export const nl: Messages = {
  success: 'Gelukt',
  unknown_error: 'Er is een onbekende fout opgetreden',
  server_error: 'De server reageerde niet, probeer het later opnieuw.',
  network_unstable: 'Het netwerk is instabiel, probeer het later opnieuw.',
  not_found: 'Niet gevonden.',
  route_not_found: 'Deze API-aanroep bestaat niet: {method} {path}',
  path_not_exist: 'Het pad bestaat niet.',
  invalid_request: 'Het verzoek is ongeldig: {detail}',
  invalid_json: 'De inhoud van het verzoek is geen geldige JSON.',
  body_too_large: 'De inhoud van het verzoek is te groot.',
  field_required: '{field} is verplicht.',
  field_invalid: '{field} is ongeldig.',
  too_many_requests: 'Te veel verzoeken, probeer het later opnieuw.',
  unauthenticated: 'Log eerst in.',
  session_expired: 'Je sessie is verlopen, log opnieuw in.',
  email_format: 'Ongeldig e-mailformaat.',
  email_empty: 'E-mailadres mag niet leeg zijn',
  password_too_short: 'Het wachtwoord moet minstens {min} tekens hebben.',
  account_exists: 'Er bestaat al een account met dit e-mailadres.',
  login_failed: 'Het e-mailadres of wachtwoord is onjuist.',
  login_rate_limited: 'Te veel aanmeldpogingen, probeer het over {minutes} minuten opnieuw.',
  notify_email_saved: 'Meldingsinstellingen opgeslagen.',
  license_expired: 'Je huidige licentie is verlopen.',
  traffic_insufficient:
    'Je resterende overdrachtsdata is onvoldoende. Je kunt extra data krijgen door een databundel te kopen',
  traffic_needed: 'Niet genoeg dataverkeer beschikbaar, in totaal is {size} nodig',
  transaction_cap: 'Transactielimiet overschreden, zie de pagina Limieten en waarschuwingen om je limiet te verhogen',
  premium_required: 'Deze functie is beschikbaar met een premiumlicentie.',
  cloud_auth_expired: 'De autorisatie is verlopen, autoriseer opnieuw.',
  cloud_already_bound: 'Deze clouddrive is al gekoppeld',
  cloud_limit_reached: 'Je hebt het maximale aantal clouddrives bereikt, orden ze in Beheer.',
  cloud_free_limit_reached:
    'Een gratis account kan maximaal {max} clouddrives koppelen. Upgrade om er meer te koppelen.',
  cloud_kind_unknown: 'Onbekend type clouddrive: {kind}',
  cloud_kind_unavailable: '{kind} is niet beschikbaar op deze server: {reason}',
  cloud_credentials_invalid: 'De bucketnaam, ID of sleutel is onjuist, probeer het opnieuw',
  cloud_connect_failed: 'Kan geen verbinding maken met de clouddrive: {reason}',
  cloud_login_invalid: 'Het adres, de gebruikersnaam of het wachtwoord is onjuist, probeer het opnieuw',
  cloud_oauth_only: '{kind} wordt verbonden via een eigen aanmeldvenster.',
  oauth_state_invalid: 'Het aanmeldverzoek is verlopen of ongeldig, probeer het opnieuw.',
  oauth_denied: 'Toegang tot {kind} is niet verleend.',
  oauth_failed: '{kind} heeft de aanmelding geweigerd: {reason}',
  oauth_other_account:
    'Deze cloud hoort bij een ander {kind}-account; meld u aan met hetzelfde account om hem opnieuw te autoriseren.',
  cloud_reauthorize_other:
    'Deze gegevens horen bij een andere cloudopslag. Verbind die in plaats daarvan als nieuwe cloudopslag.',
  cloud_operation_error: 'Fout bij bewerking op clouddrive! [{code}]',
  cloud_unreachable: 'De clouddrive is niet bereikbaar, probeer het later opnieuw.',
  cloud_read_only: 'Deze clouddrive staat deze bewerking niet toe.',
  bucket_empty: 'Bucketnaam mag niet leeg zijn.',
  access_key_empty: 'Toegangssleutel-ID mag niet leeg zijn.',
  secret_key_empty: 'Geheime toegangssleutel mag niet leeg zijn.',
  name_empty: 'De naam mag niet leeg zijn.',
  name_forbidden_chars: 'Een naam mag geen van deze tekens bevatten: / : * ? \\ " < > |',
  name_dot: 'Een naam mag niet "." of ".." zijn.',
  name_trailing_space: 'Een naam mag niet op een spatie eindigen.',
  name_too_long: 'De naam is te lang.',
  name_control_chars: 'Een naam mag geen stuurtekens bevatten.',
  already_exists: 'Er bestaat al een bestand of map met deze naam.',
  insufficient_space: 'Onvoldoende ruimte op {cloud_name}!',
  insufficient_target_storage: 'Onvoldoende opslag in de doelcloud',
  select_files_first: 'Selecteer eerst bestanden',
  same_path: 'Het doelpad mag niet gelijk zijn aan het bronpad.',
  target_not_folder: 'Het doelpad is een bestand, geen map.',
  confirm_same_cloud: 'De bron en het doel zijn dezelfde clouddrive. Doorgaan?',
  confirm_deletions:
    'Deze synchronisatie zou {count} van de {total} bestanden in het doel verwijderen. Bevestig om door te gaan.',
  confirm_deletions_source:
    'Deze synchronisatie zou {count} van de {total} bestanden in de bron verwijderen. Bevestig om door te gaan.',
  photos_only_media: "Alleen afbeeldingen en video's kunnen naar een fotocloud worden gemigreerd.",
  task_not_found: 'De taak bestaat niet.',
  task_running: 'De taak wordt uitgevoerd; annuleer deze eerst.',
  task_not_retryable: 'Deze taak heeft geen mislukt deel om opnieuw over te dragen.',
  schedule_invalid: 'De planning is ongeldig: {detail}',
  schedule_in_past: 'Het geplande tijdstip is al verstreken.',
  cleanup_delete_last_copy: 'Selecteer elke kopie expliciet om alle kopieën van een dubbel bestand te verwijderen.',
  cleanup_scan_running: 'De scan loopt nog; wacht tot hij klaar is.',
  cleanup_deletion_running:
    'Er loopt al een verwijdering voor deze scan; wacht tot die klaar is en probeer het opnieuw.',
  feedback_details_empty: 'Details mogen niet leeg zijn',
  feedback_problem_type_empty: 'Probleemtype mag niet leeg zijn',
  local_path_not_allowed: 'Deze map valt buiten de mappen die de server toestaat: {roots}',
  host_key_changed:
    'De server {host} toonde een andere hostsleutel dan bij de eerste verbinding. Verbinding geweigerd.',
  tls_fingerprint_mismatch:
    'De server {host} toonde een TLS-certificaat met SHA-256-vingerafdruk {fingerprint}, niet de ingevoerde. Het wachtwoord is niet verzonden.',
  tls_certificate_untrusted:
    'De server {host} toonde een TLS-certificaat dat niet vertrouwd wordt (zelfondertekend?). Voer de SHA-256-vingerafdruk in om het te vertrouwen.',
  // Sessions and sign-in (issue 34).
  host_not_allowed:
    'Deze server antwoordt niet op het adres {host}. Open hem op zijn ingestelde adres, of vraag de beheerder deze naam aan SKYFERRY_ALLOWED_HOSTS toe te voegen.',
  login_slowed:
    'Te veel mislukte aanmeldingen van hier voor dit account. Wacht {seconds} seconden en probeer het opnieuw.',
  bind_requires_sign_in: 'Meld u opnieuw aan in deze browser en koppel deze clouddrives meteen om ze te behouden.',
  local_visitor_refused:
    'Mappen op de server zijn niet beschikbaar voor bezoekers. Meld je aan met een account dat de beheerder ze laat gebruiken.',
  local_not_granted:
    'Alleen de beheerder, en gebruikers die de beheerder toestemming geeft, mogen mappen op de server gebruiken. Vraag de beheerder om toegang.',
  local_no_roots:
    'Op deze server is hiervoor geen map ingesteld: de thuismap wordt alleen aangeboden zolang de server één account heeft. Vraag het de beheerder.',
  operator_only: 'Alleen de beheerder van de server mag dit doen.',
  local_folder_taken: 'Een andere gebruiker heeft de map {name} al.',
  cloud_address_not_allowed:
    'Skyferry maakt geen verbinding met deze server: het adres ligt in een loopback-, privé- of gereserveerd netwerk. De beheerder van de server kan zulke netwerken toestaan (SKYFERRY_ALLOW_PRIVATE_NETWORKS).',
  // Tasks page: runs, verification, editing (issue 35).
  run_not_found: 'Deze uitvoering staat niet in de geschiedenis van de taak.',
  upload_lost: 'De server die deze upload ontving is gestopt voordat die klaar was; begin de upload opnieuw.',
  verify_running: 'Er loopt al een controle van deze taak; wacht tot die klaar is.',
  task_edit_running:
    'Wat uitvoeringen doen kan niet veranderen terwijl de taak loopt; wacht tot de uitvoering klaar is of annuleer haar.',
  confirm_edit_deletions:
    'Met deze instellingen zou de volgende uitvoering {count} bestanden verwijderen. Bevestig om op te slaan.',
  field_not_for_task: '{field} geldt niet voor deze taak.',
  // Account basics.
  password_incorrect: 'Het wachtwoord is onjuist.',
  password_unchanged: 'Het nieuwe wachtwoord moet verschillen van het huidige.',
  password_changed: 'Uw wachtwoord is gewijzigd. Uw andere apparaten zijn afgemeld.',
  email_same: 'Dit is al het e-mailadres van uw account.',
  email_change_sent: 'We hebben een link naar {email} gestuurd. Open die om uw nieuwe adres te bevestigen.',
  email_changed: 'Uw e-mailadres is nu {email}.',
  reset_link_sent:
    'Als een account dit adres gebruikt, is er een link naartoe gestuurd om een nieuw wachtwoord in te stellen.',
  account_link_invalid: 'Deze link is verlopen of al gebruikt. Vraag een nieuwe aan.',
  password_reset_done: 'Uw nieuwe wachtwoord is ingesteld. Meld u ermee aan.',
  operator_successor_required:
    'U bent de enige beheerder van deze server. Wijs een ander account aan dat beheerder wordt voordat u het uwe verwijdert.',
  operator_successor_unknown: 'Geen ander account op deze server gebruikt het adres {email}.',
  account_deleted: 'Uw account is verwijderd.',
  kind_not_set_up: 'Niet ingesteld op deze server.',
  kind_not_available: 'Nog niet beschikbaar op deze server.',
  // Support: feedback tickets, release notes (issue 39).
  details_empty: 'De details mogen niet leeg zijn',
  problem_type_empty: 'Het soort probleem mag niet leeg zijn',
  problem_type_invalid: 'Kies een van de genoemde soorten problemen.',
  ticket_sent: 'Bedankt! Uw bericht is verzonden naar de beheerder van deze server.',
  problem_type: 'Soort probleem',
  pt_transfer: 'Migreren of synchroniseren',
  pt_connect: 'Een clouddrive koppelen',
  pt_account: 'Account en aanmelden',
  pt_bug: 'Iets werkt niet',
  pt_idea: 'Een suggestie',
  pt_other: 'Iets anders',
  attachment_invalid:
    'Het bestand {name} kan niet worden bijgevoegd: alleen logbestanden (.txt, .log) en schermafbeeldingen (.png, .jpg) tot 2 MB per stuk, hooguit 3.',
  release_notes_unknown: 'Er zijn geen release-opmerkingen voor versie {version}.',
  invalid_filter: 'Deze filterregel of waarde is ongeldig: {rule}',
  // The app registry and its apps (issue 37).
  file_changed_meanwhile:
    'Het bestand is gewijzigd sinds het werd geopend. Sla uw werk onder een andere naam op of open het bestand opnieuw.',
  app_not_found: 'Deze app is niet geregistreerd op deze server.',
  app_token_invalid: 'De app heeft geen toegang meer tot dit bestand: open het opnieuw.',
  app_cannot_write: 'Deze app mag het bestand alleen lezen.',
  app_function_origin: 'Elke functie moet op het adres van de app zelf staan ({origin}).',
  image_convert_failed: 'De afbeelding kon niet worden omgezet: {detail}',
  // Buying (issue 38).
  billing_unavailable: 'Kopen is niet beschikbaar op deze server.',
  packet_needs_license: 'Datapakketten werken alleen met een actieve licentie: koop eerst een licentie.',
  order_not_refundable:
    'Deze aankoop kan niet meer worden terugbetaald: de volledige terugbetaling geldt binnen {days} dagen na betaling.',
  survey_answered: 'Je hebt de vragenlijst al beantwoord.',
  // Exports (issue 37).
  export_too_large: 'Het bestand is te groot om te exporteren: hooguit {max}.',
  export_size_mismatch: 'Het bestand had niet de aangekondigde grootte.',
  export_download_failed: 'Het bestand kon niet worden gedownload (HTTP {status}).',
  export_too_many_redirects: 'Het downloadadres stuurt te vaak door.',
  wopi_lock_mismatch: 'Het document is vergrendeld door een andere editor.',
};
