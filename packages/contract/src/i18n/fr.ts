import type { Messages } from './en.ts';

export const fr: Messages = {
  success: 'Succès',
  unknown_error: 'Une erreur inconnue est survenue',
  server_error: "Le serveur n'a pas répondu, veuillez réessayer plus tard.",
  network_unstable: 'Le réseau est instable, veuillez réessayer plus tard.',
  not_found: 'Introuvable.',
  route_not_found: "Cet appel d'API n'existe pas : {method} {path}",
  path_not_exist: "Le chemin n'existe pas.",
  invalid_request: 'La requête est invalide : {detail}',
  invalid_json: "Le corps de la requête n'est pas un JSON valide.",
  body_too_large: 'Le corps de la requête est trop volumineux.',
  field_required: '{field} est obligatoire.',
  field_invalid: "{field} n'est pas valide.",
  too_many_requests: 'Trop de requêtes, veuillez réessayer plus tard.',
  unauthenticated: "Veuillez d'abord vous connecter.",
  session_expired: 'Votre session a expiré, veuillez vous reconnecter.',
  email_format: "Format d'e-mail incorrect.",
  email_empty: "L'e-mail ne peut pas être vide",
  password_too_short: 'Le mot de passe doit comporter au moins {min} caractères.',
  account_exists: 'Un compte avec cet e-mail existe déjà.',
  login_failed: "L'e-mail ou le mot de passe est incorrect.",
  login_rate_limited: 'Trop de tentatives de connexion, veuillez réessayer dans {minutes} minutes.',
  notify_email_saved: 'Paramètres de notification enregistrés.',
  license_expired: 'Votre licence actuelle a expiré.',
  traffic_insufficient:
    'Votre volume de transfert restant est insuffisant. Vous pouvez obtenir des données supplémentaires en achetant un forfait de données',
  traffic_needed: 'Trafic disponible insuffisant, {size} nécessaires au total',
  transaction_cap: 'Plafond de transactions dépassé, consultez la page Plafonds et alertes pour relever votre plafond',
  premium_required: 'Cette fonctionnalité est disponible avec une licence Premium.',
  cloud_auth_expired: "L'autorisation a expiré, veuillez autoriser à nouveau.",
  cloud_already_bound: 'Ce lecteur cloud est déjà associé',
  cloud_limit_reached: 'Vous avez atteint le nombre maximal de lecteurs cloud, veuillez les organiser dans Gestion.',
  cloud_free_limit_reached:
    "Un compte gratuit peut connecter jusqu'à {max} lecteurs cloud. Passez à Premium pour en connecter davantage.",
  cloud_kind_unknown: 'Type de lecteur cloud inconnu : {kind}',
  cloud_kind_unavailable: "{kind} n'est pas disponible sur ce serveur : {reason}",
  cloud_credentials_invalid: "Le nom du bucket, l'ID ou la clé est incorrect, veuillez réessayer",
  cloud_connect_failed: 'Impossible de se connecter au lecteur cloud : {reason}',
  cloud_login_invalid: "L'adresse, le nom d'utilisateur ou le mot de passe est incorrect, veuillez réessayer",
  cloud_oauth_only: '{kind} se connecte via sa propre fenêtre de connexion.',
  oauth_state_invalid: "La demande de connexion a expiré ou n'est pas valide, veuillez réessayer.",
  oauth_denied: "L'accès à {kind} n'a pas été accordé.",
  oauth_failed: '{kind} a refusé la connexion : {reason}',
  oauth_other_account:
    'Ce cloud appartient à un autre compte {kind} ; connectez-vous avec le même compte pour le réautoriser.',
  cloud_reauthorize_other:
    'Ces identifiants correspondent à un autre espace cloud. Connectez-le plutôt comme un nouvel espace cloud.',
  cloud_operation_error: "Erreur d'opération sur le lecteur cloud ! [{code}]",
  cloud_unreachable: 'Le lecteur cloud est injoignable, veuillez réessayer plus tard.',
  cloud_read_only: "Ce lecteur cloud n'autorise pas cette opération.",
  bucket_empty: 'Le nom du bucket ne peut pas être vide.',
  access_key_empty: "L'ID de clé d'accès ne peut pas être vide.",
  secret_key_empty: "La clé d'accès secrète ne peut pas être vide.",
  name_empty: 'Le nom ne peut pas être vide.',
  name_forbidden_chars: 'Un nom ne peut contenir aucun de ces caractères : / : * ? \\ " < > |',
  name_dot: 'Un nom ne peut pas être « . » ou « .. ».',
  name_trailing_space: 'Un nom ne peut pas se terminer par une espace.',
  name_too_long: 'Le nom est trop long.',
  name_control_chars: 'Un nom ne peut pas contenir de caractères de contrôle.',
  already_exists: 'Un fichier ou un dossier portant ce nom existe déjà.',
  insufficient_space: 'Espace insuffisant sur {cloud_name} !',
  insufficient_target_storage: 'Stockage insuffisant sur le cloud cible',
  select_files_first: "Veuillez d'abord sélectionner des fichiers",
  same_path: 'Le chemin cible ne peut pas être identique au chemin source.',
  target_not_folder: 'Le chemin cible est un fichier, pas un dossier.',
  confirm_same_cloud: 'La source et la cible sont le même lecteur cloud. Continuer ?',
  confirm_deletions:
    'Cette synchronisation supprimerait {count} fichiers sur {total} dans la cible. Confirmez pour continuer.',
  confirm_deletions_source:
    'Cette synchronisation supprimerait {count} fichiers sur {total} dans la source. Confirmez pour continuer.',
  photos_only_media: 'Seules les images et les vidéos peuvent être migrées vers un cloud de photos.',
  task_not_found: "La tâche n'existe pas.",
  task_running: "La tâche est en cours ; annulez-la d'abord.",
  task_not_retryable: "Cette tâche n'a aucune partie en échec à retransmettre.",
  schedule_invalid: 'La planification est invalide : {detail}',
  schedule_in_past: "L'heure planifiée est déjà passée.",
  cleanup_delete_last_copy:
    "Sélectionnez explicitement chaque copie pour supprimer toutes les copies d'un fichier en double.",
  cleanup_scan_running: "L'analyse est toujours en cours ; attendez qu'elle se termine.",
  cleanup_deletion_running:
    "Une suppression de cette analyse est déjà en cours ; attendez qu'elle se termine et réessayez.",
  feedback_details_empty: 'Les détails ne peuvent pas être vides',
  feedback_problem_type_empty: 'Le type de problème ne peut pas être vide',
  local_path_not_allowed: 'Ce dossier est en dehors des dossiers autorisés par le serveur : {roots}',
  host_key_changed:
    "Le serveur {host} a présenté une clé d'hôte différente de celle de la première connexion. Connexion refusée.",
  tls_fingerprint_mismatch:
    "Le serveur {host} a présenté un certificat TLS d'empreinte SHA-256 {fingerprint}, qui n'est pas celle saisie. Le mot de passe n'a pas été envoyé.",
  tls_certificate_untrusted:
    'Le serveur {host} a présenté un certificat TLS non approuvé (auto-signé ?). Saisissez son empreinte SHA-256 pour lui faire confiance.',
  // Sessions and sign-in (issue 34).
  host_not_allowed:
    "Ce serveur ne répond pas à l'adresse {host}. Ouvrez-le à son adresse configurée, ou demandez à l'opérateur d'ajouter ce nom à SKYFERRY_ALLOWED_HOSTS.",
  login_slowed:
    'Trop de connexions échouées depuis cet endroit pour ce compte. Veuillez patienter {seconds} secondes puis réessayer.',
  bind_requires_sign_in: 'Pour conserver ces clouds, reconnectez-vous dans ce navigateur et associez-les aussitôt.',
  local_visitor_refused:
    "Les dossiers du serveur ne sont pas accessibles aux visiteurs. Connectez-vous avec un compte que l'opérateur a autorisé à les utiliser.",
  local_not_granted:
    "Seuls l'opérateur et les utilisateurs qu'il autorise peuvent utiliser des dossiers du serveur. Demandez l'accès à l'opérateur.",
  local_no_roots:
    'Aucun dossier de ce serveur n’est configuré pour cela : le dossier personnel n’est proposé que tant que le serveur n’a qu’un seul compte. Demandez à l’opérateur.',
  operator_only: "Seul l'opérateur du serveur peut faire cela.",
  local_folder_taken: 'Un autre utilisateur a déjà le dossier {name}.',
  cloud_address_not_allowed:
    "Skyferry ne se connecte pas à ce serveur : son adresse se trouve sur un réseau de bouclage, privé ou réservé. L'opérateur du serveur peut autoriser ces réseaux (SKYFERRY_ALLOW_PRIVATE_NETWORKS).",
  // Tasks page: runs, verification, editing (issue 35).
  run_not_found: "Cette exécution n'est pas dans l'historique de la tâche.",
  upload_lost: "Le serveur qui recevait cet envoi s'est arrêté avant la fin ; recommencez l'envoi.",
  verify_running: "Une vérification de cette tâche est déjà en cours ; attendez qu'elle se termine.",
  task_edit_running:
    "Ce que font les exécutions ne peut pas changer pendant que la tâche s'exécute ; attendez la fin de l'exécution ou annulez-la.",
  confirm_edit_deletions:
    'Avec ces réglages, la prochaine exécution supprimerait {count} fichiers. Confirmez pour enregistrer.',
  field_not_for_task: "{field} ne s'applique pas à cette tâche.",
  // Account basics.
  password_incorrect: 'Le mot de passe est incorrect.',
  password_unchanged: 'Le nouveau mot de passe doit être différent de l’actuel.',
  password_changed: 'Votre mot de passe a été modifié. Vos autres appareils ont été déconnectés.',
  email_same: 'C’est déjà l’adresse e-mail de votre compte.',
  email_change_sent: 'Nous avons envoyé un lien à {email}. Ouvrez-le pour confirmer votre nouvelle adresse.',
  email_changed: 'Votre adresse e-mail est désormais {email}.',
  reset_link_sent: 'Si un compte utilise cette adresse, un lien pour définir un nouveau mot de passe lui a été envoyé.',
  account_link_invalid: 'Ce lien a expiré ou a déjà été utilisé. Demandez-en un nouveau.',
  password_reset_done: 'Votre nouveau mot de passe est défini. Connectez-vous avec celui-ci.',
  operator_successor_required:
    'Vous êtes le seul opérateur de ce serveur. Désignez un autre compte qui deviendra opérateur avant de supprimer le vôtre.',
  operator_successor_unknown: 'Aucun autre compte de ce serveur n’utilise l’adresse {email}.',
  account_deleted: 'Votre compte a été supprimé.',
  kind_not_set_up: 'Non configuré sur ce serveur.',
  kind_not_available: 'Pas encore disponible sur ce serveur.',
  // Support: feedback tickets, release notes (issue 39).
  details_empty: 'Les détails ne peuvent pas être vides',
  problem_type_empty: 'Le type de problème ne peut pas être vide',
  problem_type_invalid: 'Choisissez l’un des types de problème proposés.',
  ticket_sent: 'Merci ! Votre message a été envoyé à l’opérateur de ce serveur.',
  problem_type: 'Type de problème',
  pt_transfer: 'Migration ou synchronisation',
  pt_connect: 'Connexion d’un stockage cloud',
  pt_account: 'Compte et connexion',
  pt_bug: 'Quelque chose ne fonctionne pas',
  pt_idea: 'Une suggestion',
  pt_other: 'Autre chose',
  attachment_invalid:
    'Le fichier {name} ne peut pas être joint : seuls les journaux (.txt, .log) et les captures d’écran (.png, .jpg) de 2 Mo maximum chacun, 3 au plus.',
  release_notes_unknown: 'Il n’y a pas de notes de version pour la version {version}.',
  invalid_filter: "Cette règle ou valeur de filtre n'est pas valide : {rule}",
  // The app registry and its apps (issue 37).
  file_changed_meanwhile:
    'Le fichier a changé depuis son ouverture. Enregistrez votre travail sous un autre nom ou rouvrez le fichier.',
  app_not_found: 'Cette application n’est pas enregistrée sur ce serveur.',
  app_token_invalid: 'L’application n’a plus accès à ce fichier : rouvrez-le.',
  app_cannot_write: 'Cette application peut seulement lire le fichier.',
  app_function_origin: 'Chaque fonction doit être à l’adresse de l’application ({origin}).',
  image_convert_failed: 'L’image n’a pas pu être convertie : {detail}',
  // Buying (issue 38).
  billing_unavailable: "L'achat n'est pas disponible sur ce serveur.",
  packet_needs_license:
    "Les forfaits de données ne fonctionnent qu'avec une licence active : achetez d'abord une licence.",
  order_not_refundable:
    "Cet achat ne peut plus être remboursé : le remboursement intégral s'applique dans les {days} jours suivant le paiement.",
  survey_answered: 'Vous avez déjà répondu au questionnaire.',
  // Exports (issue 37).
  export_too_large: 'Le fichier est trop volumineux pour être exporté : {max} au maximum.',
  export_size_mismatch: 'Le fichier n’avait pas la taille annoncée.',
  export_download_failed: 'Le fichier n’a pas pu être téléchargé (HTTP {status}).',
  export_too_many_redirects: 'L’adresse de téléchargement redirige trop de fois.',
  wopi_lock_mismatch: 'Le document est verrouillé par un autre éditeur.',
};
