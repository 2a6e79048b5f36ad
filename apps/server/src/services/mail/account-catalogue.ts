import type { Language } from '@skyferry/contract';

/**
 * The strings of the account e-mails (password reset, e-mail change, password changed), in every
 * language of the product. `{name}` placeholders are filled by `accountMailText`. A test fails when
 * a language lacks a key, changes its placeholders, or keeps an English string.
 */
export const ACCOUNT_MAIL_EN = {
  reset_subject: 'Set a new Skyferry password',
  reset_body:
    'Someone, hopefully you, asked to set a new password for the Skyferry account {email}. Open this link within {minutes} minutes to choose one. It works once.',
  reset_button: 'Set a new password',
  reset_ignore: 'If you did not ask for this, ignore this email: your password stays as it is.',
  confirm_subject: 'Confirm your new Skyferry email address',
  confirm_body: 'Open this link within {hours} hours to make {email} the email address of your Skyferry account.',
  confirm_button: 'Confirm the new address',
  confirm_ignore: 'If you did not ask for this, ignore this email: nothing changes.',
  change_requested_subject: 'Your Skyferry email address is being changed',
  change_requested_body:
    'Someone signed in to your Skyferry account asked to change its email address to {email}. It changes only once the link sent to that address is opened.',
  change_requested_warning: 'If this was not you, change your password now: that also signs out every other device.',
  changed_subject: 'Your Skyferry email address was changed',
  changed_body:
    'The email address of your Skyferry account is now {email}. Emails about the account go there from now on.',
  changed_warning: 'If you did not do this, contact the operator of this Skyferry server.',
  password_changed_subject: 'Your Skyferry password was changed',
  password_changed_body:
    'The password of your Skyferry account {email} was changed, and its other devices were signed out.',
  password_changed_warning: 'If you did not do this, set a new password with "Forgot password?" on the sign-in page.',
  link_fallback: 'If the button does not work, copy this address into your browser:',
  footer: 'Sent by the Skyferry server at {url}.',
} as const;

export type AccountMailKey = keyof typeof ACCOUNT_MAIL_EN;
export type AccountMailStrings = Record<AccountMailKey, string>;

const ar: AccountMailStrings = {
  reset_subject: 'تعيين كلمة مرور جديدة لـ Skyferry',
  reset_body:
    'طلب أحدهم، ونأمل أن تكون أنت، تعيين كلمة مرور جديدة لحساب Skyferry ‏{email}. افتح هذا الرابط خلال {minutes} دقيقة لاختيارها. يعمل الرابط مرة واحدة.',
  reset_button: 'تعيين كلمة مرور جديدة',
  reset_ignore: 'إن لم تطلب ذلك، فتجاهل هذه الرسالة: تبقى كلمة المرور كما هي.',
  confirm_subject: 'تأكيد عنوان بريدك الإلكتروني الجديد في Skyferry',
  confirm_body: 'افتح هذا الرابط خلال {hours} ساعة ليصبح {email} عنوان البريد الإلكتروني لحسابك في Skyferry.',
  confirm_button: 'تأكيد العنوان الجديد',
  confirm_ignore: 'إن لم تطلب ذلك، فتجاهل هذه الرسالة: لن يتغير شيء.',
  change_requested_subject: 'يجري تغيير عنوان بريدك الإلكتروني في Skyferry',
  change_requested_body:
    'طلب شخص مسجّل الدخول إلى حسابك في Skyferry تغيير عنوان بريده الإلكتروني إلى {email}. لا يتغير العنوان إلا بعد فتح الرابط المرسل إليه.',
  change_requested_warning: 'إن لم تكن أنت، فغيّر كلمة المرور الآن: فذلك يسجّل الخروج أيضًا من كل الأجهزة الأخرى.',
  changed_subject: 'تم تغيير عنوان بريدك الإلكتروني في Skyferry',
  changed_body: 'أصبح عنوان البريد الإلكتروني لحسابك في Skyferry الآن {email}. ستصل رسائل الحساب إليه من الآن فصاعدًا.',
  changed_warning: 'إن لم تفعل ذلك، فتواصل مع مشغّل خادم Skyferry هذا.',
  password_changed_subject: 'تم تغيير كلمة مرورك في Skyferry',
  password_changed_body: 'تم تغيير كلمة مرور حسابك في Skyferry ‏{email}، وتم تسجيل الخروج من أجهزته الأخرى.',
  password_changed_warning: 'إن لم تفعل ذلك، فعيّن كلمة مرور جديدة من «هل نسيت كلمة المرور؟» في صفحة تسجيل الدخول.',
  link_fallback: 'إذا لم يعمل الزر، فانسخ هذا العنوان إلى متصفحك:',
  footer: 'أُرسلت من خادم Skyferry على {url}.',
};

const br: AccountMailStrings = {
  reset_subject: 'Defina uma nova senha do Skyferry',
  reset_body:
    'Alguém, provavelmente você, pediu uma nova senha para a conta do Skyferry {email}. Abra este link em até {minutes} minutos para escolher uma. Ele funciona uma única vez.',
  reset_button: 'Definir uma nova senha',
  reset_ignore: 'Se você não pediu isso, ignore este e-mail: sua senha continua a mesma.',
  confirm_subject: 'Confirme seu novo e-mail do Skyferry',
  confirm_body: 'Abra este link em até {hours} horas para tornar {email} o e-mail da sua conta do Skyferry.',
  confirm_button: 'Confirmar o novo endereço',
  confirm_ignore: 'Se você não pediu isso, ignore este e-mail: nada muda.',
  change_requested_subject: 'O e-mail da sua conta do Skyferry está sendo alterado',
  change_requested_body:
    'Alguém conectado à sua conta do Skyferry pediu para mudar o e-mail dela para {email}. Ele só muda quando o link enviado para esse endereço é aberto.',
  change_requested_warning:
    'Se não foi você, altere sua senha agora: isso também desconecta todos os outros dispositivos.',
  changed_subject: 'O e-mail da sua conta do Skyferry foi alterado',
  changed_body:
    'O e-mail da sua conta do Skyferry agora é {email}. Os e-mails sobre a conta vão para lá a partir de agora.',
  changed_warning: 'Se não foi você, entre em contato com o operador deste servidor Skyferry.',
  password_changed_subject: 'Sua senha do Skyferry foi alterada',
  password_changed_body:
    'A senha da sua conta do Skyferry {email} foi alterada, e os outros dispositivos dela foram desconectados.',
  password_changed_warning: 'Se não foi você, defina uma nova senha em "Esqueceu a senha?" na página de login.',
  link_fallback: 'Se o botão não funcionar, copie este endereço no navegador:',
  footer: 'Enviado pelo servidor Skyferry em {url}.',
};

const de: AccountMailStrings = {
  reset_subject: 'Neues Skyferry-Passwort festlegen',
  reset_body:
    'Jemand, hoffentlich Sie, hat ein neues Passwort für das Skyferry-Konto {email} angefordert. Öffnen Sie diesen Link innerhalb von {minutes} Minuten, um eines zu wählen. Er funktioniert einmal.',
  reset_button: 'Neues Passwort festlegen',
  reset_ignore: 'Wenn Sie das nicht angefordert haben, ignorieren Sie diese E-Mail: Ihr Passwort bleibt unverändert.',
  confirm_subject: 'Neue E-Mail-Adresse für Skyferry bestätigen',
  confirm_body:
    'Öffnen Sie diesen Link innerhalb von {hours} Stunden, um {email} zur E-Mail-Adresse Ihres Skyferry-Kontos zu machen.',
  confirm_button: 'Neue Adresse bestätigen',
  confirm_ignore: 'Wenn Sie das nicht angefordert haben, ignorieren Sie diese E-Mail: Es ändert sich nichts.',
  change_requested_subject: 'Ihre Skyferry-E-Mail-Adresse wird geändert',
  change_requested_body:
    'Jemand, der in Ihrem Skyferry-Konto angemeldet ist, möchte dessen E-Mail-Adresse in {email} ändern. Sie ändert sich erst, wenn der an diese Adresse gesendete Link geöffnet wird.',
  change_requested_warning:
    'Wenn Sie das nicht waren, ändern Sie jetzt Ihr Passwort: Dadurch werden auch alle anderen Geräte abgemeldet.',
  changed_subject: 'Ihre Skyferry-E-Mail-Adresse wurde geändert',
  changed_body:
    'Die E-Mail-Adresse Ihres Skyferry-Kontos lautet jetzt {email}. E-Mails zum Konto gehen ab sofort dorthin.',
  changed_warning: 'Wenn Sie das nicht waren, wenden Sie sich an den Betreiber dieses Skyferry-Servers.',
  password_changed_subject: 'Ihr Skyferry-Passwort wurde geändert',
  password_changed_body:
    'Das Passwort Ihres Skyferry-Kontos {email} wurde geändert, und seine anderen Geräte wurden abgemeldet.',
  password_changed_warning:
    'Wenn Sie das nicht waren, legen Sie über „Passwort vergessen?“ auf der Anmeldeseite ein neues Passwort fest.',
  link_fallback: 'Falls die Schaltfläche nicht funktioniert, kopieren Sie diese Adresse in Ihren Browser:',
  footer: 'Gesendet vom Skyferry-Server unter {url}.',
};

const es: AccountMailStrings = {
  reset_subject: 'Establecer una nueva contraseña de Skyferry',
  reset_body:
    'Alguien, seguramente usted, ha pedido una nueva contraseña para la cuenta de Skyferry {email}. Abra este enlace en los próximos {minutes} minutos para elegirla. Solo funciona una vez.',
  reset_button: 'Establecer una nueva contraseña',
  reset_ignore: 'Si no lo ha pedido, ignore este correo: su contraseña no cambia.',
  confirm_subject: 'Confirme su nuevo correo electrónico de Skyferry',
  confirm_body:
    'Abra este enlace en las próximas {hours} horas para que {email} sea el correo electrónico de su cuenta de Skyferry.',
  confirm_button: 'Confirmar la nueva dirección',
  confirm_ignore: 'Si no lo ha pedido, ignore este correo: no cambia nada.',
  change_requested_subject: 'Se está cambiando el correo electrónico de su cuenta de Skyferry',
  change_requested_body:
    'Alguien con sesión iniciada en su cuenta de Skyferry ha pedido cambiar su correo electrónico a {email}. Solo cambia cuando se abre el enlace enviado a esa dirección.',
  change_requested_warning:
    'Si no ha sido usted, cambie su contraseña ahora: así también se cierra la sesión en los demás dispositivos.',
  changed_subject: 'Se ha cambiado el correo electrónico de su cuenta de Skyferry',
  changed_body:
    'El correo electrónico de su cuenta de Skyferry ahora es {email}. Los correos sobre la cuenta llegarán allí a partir de ahora.',
  changed_warning: 'Si no ha sido usted, póngase en contacto con el operador de este servidor de Skyferry.',
  password_changed_subject: 'Se ha cambiado su contraseña de Skyferry',
  password_changed_body:
    'Se ha cambiado la contraseña de su cuenta de Skyferry {email} y se ha cerrado la sesión en sus demás dispositivos.',
  password_changed_warning:
    'Si no ha sido usted, establezca una nueva contraseña con «¿Olvidó su contraseña?» en la página de inicio de sesión.',
  link_fallback: 'Si el botón no funciona, copie esta dirección en su navegador:',
  footer: 'Enviado por el servidor de Skyferry en {url}.',
};

const fr: AccountMailStrings = {
  reset_subject: 'Définir un nouveau mot de passe Skyferry',
  reset_body:
    'Quelqu’un, sans doute vous, a demandé un nouveau mot de passe pour le compte Skyferry {email}. Ouvrez ce lien dans les {minutes} minutes pour en choisir un. Il ne fonctionne qu’une fois.',
  reset_button: 'Définir un nouveau mot de passe',
  reset_ignore: 'Si vous n’avez rien demandé, ignorez cet e-mail : votre mot de passe reste inchangé.',
  confirm_subject: 'Confirmez votre nouvelle adresse e-mail Skyferry',
  confirm_body:
    'Ouvrez ce lien dans les {hours} heures pour faire de {email} l’adresse e-mail de votre compte Skyferry.',
  confirm_button: 'Confirmer la nouvelle adresse',
  confirm_ignore: 'Si vous n’avez rien demandé, ignorez cet e-mail : rien ne change.',
  change_requested_subject: 'L’adresse e-mail de votre compte Skyferry va changer',
  change_requested_body:
    'Une personne connectée à votre compte Skyferry a demandé à remplacer son adresse e-mail par {email}. Elle ne change qu’une fois ouvert le lien envoyé à cette adresse.',
  change_requested_warning:
    'Si ce n’était pas vous, changez votre mot de passe maintenant : cela déconnecte aussi tous les autres appareils.',
  changed_subject: 'L’adresse e-mail de votre compte Skyferry a changé',
  changed_body:
    'L’adresse e-mail de votre compte Skyferry est désormais {email}. Les e-mails concernant le compte y seront envoyés.',
  changed_warning: 'Si ce n’était pas vous, contactez l’opérateur de ce serveur Skyferry.',
  password_changed_subject: 'Votre mot de passe Skyferry a été modifié',
  password_changed_body:
    'Le mot de passe de votre compte Skyferry {email} a été modifié, et ses autres appareils ont été déconnectés.',
  password_changed_warning:
    'Si ce n’était pas vous, définissez un nouveau mot de passe avec « Mot de passe oublié ? » sur la page de connexion.',
  link_fallback: 'Si le bouton ne fonctionne pas, copiez cette adresse dans votre navigateur :',
  footer: 'Envoyé par le serveur Skyferry à l’adresse {url}.',
};

const it: AccountMailStrings = {
  reset_subject: 'Imposta una nuova password di Skyferry',
  reset_body:
    'Qualcuno, probabilmente tu, ha chiesto una nuova password per l’account Skyferry {email}. Apri questo link entro {minutes} minuti per sceglierla. Funziona una sola volta.',
  reset_button: 'Imposta una nuova password',
  reset_ignore: 'Se non l’hai chiesto tu, ignora questa e-mail: la password resta invariata.',
  confirm_subject: 'Conferma il nuovo indirizzo e-mail di Skyferry',
  confirm_body: 'Apri questo link entro {hours} ore per rendere {email} l’indirizzo e-mail del tuo account Skyferry.',
  confirm_button: 'Conferma il nuovo indirizzo',
  confirm_ignore: 'Se non l’hai chiesto tu, ignora questa e-mail: non cambia nulla.',
  change_requested_subject: 'L’indirizzo e-mail del tuo account Skyferry sta per cambiare',
  change_requested_body:
    'Qualcuno che ha effettuato l’accesso al tuo account Skyferry ha chiesto di cambiarne l’indirizzo e-mail in {email}. Cambia solo quando si apre il link inviato a quell’indirizzo.',
  change_requested_warning:
    'Se non sei stato tu, cambia subito la password: così vengono disconnessi anche tutti gli altri dispositivi.',
  changed_subject: 'L’indirizzo e-mail del tuo account Skyferry è cambiato',
  changed_body:
    'L’indirizzo e-mail del tuo account Skyferry ora è {email}. Le e-mail sull’account arriveranno lì d’ora in poi.',
  changed_warning: 'Se non sei stato tu, contatta l’operatore di questo server Skyferry.',
  password_changed_subject: 'La password di Skyferry è stata cambiata',
  password_changed_body:
    'La password del tuo account Skyferry {email} è stata cambiata e gli altri dispositivi sono stati disconnessi.',
  password_changed_warning:
    'Se non sei stato tu, imposta una nuova password con «Password dimenticata?» nella pagina di accesso.',
  link_fallback: 'Se il pulsante non funziona, copia questo indirizzo nel browser:',
  footer: 'Inviata dal server Skyferry all’indirizzo {url}.',
};

const ja: AccountMailStrings = {
  reset_subject: 'Skyferry の新しいパスワードの設定',
  reset_body:
    'Skyferry アカウント {email} の新しいパスワードの設定が依頼されました。{minutes} 分以内にこのリンクを開いてパスワードを選んでください。リンクは 1 回だけ使えます。',
  reset_button: '新しいパスワードを設定',
  reset_ignore: '心当たりがない場合は、このメールを無視してください。パスワードは変わりません。',
  confirm_subject: 'Skyferry の新しいメールアドレスの確認',
  confirm_body: '{hours} 時間以内にこのリンクを開くと、{email} が Skyferry アカウントのメールアドレスになります。',
  confirm_button: '新しいアドレスを確認',
  confirm_ignore: '心当たりがない場合は、このメールを無視してください。何も変わりません。',
  change_requested_subject: 'Skyferry のメールアドレスの変更が依頼されました',
  change_requested_body:
    'Skyferry アカウントにサインインしている人が、メールアドレスを {email} に変更するよう依頼しました。そのアドレスに送られたリンクが開かれたときにだけ変更されます。',
  change_requested_warning:
    '心当たりがない場合は、今すぐパスワードを変更してください。ほかのすべてのデバイスもサインアウトされます。',
  changed_subject: 'Skyferry のメールアドレスが変更されました',
  changed_body:
    'Skyferry アカウントのメールアドレスは {email} になりました。今後、アカウントに関するメールはそちらに届きます。',
  changed_warning: '心当たりがない場合は、この Skyferry サーバーのオペレーターに連絡してください。',
  password_changed_subject: 'Skyferry のパスワードが変更されました',
  password_changed_body: 'Skyferry アカウント {email} のパスワードが変更され、ほかのデバイスはサインアウトされました。',
  password_changed_warning:
    '心当たりがない場合は、サインインページの「パスワードをお忘れですか?」から新しいパスワードを設定してください。',
  link_fallback: 'ボタンが動作しない場合は、このアドレスをブラウザーにコピーしてください:',
  footer: '{url} の Skyferry サーバーから送信されました。',
};

const ko: AccountMailStrings = {
  reset_subject: 'Skyferry 새 비밀번호 설정',
  reset_body:
    '누군가(아마도 본인)가 Skyferry 계정 {email}의 새 비밀번호 설정을 요청했습니다. {minutes}분 안에 이 링크를 열어 새 비밀번호를 정하세요. 링크는 한 번만 사용할 수 있습니다.',
  reset_button: '새 비밀번호 설정',
  reset_ignore: '요청하지 않았다면 이 메일을 무시하세요. 비밀번호는 그대로 유지됩니다.',
  confirm_subject: 'Skyferry 새 이메일 주소 확인',
  confirm_body: '{hours}시간 안에 이 링크를 열면 {email}이(가) Skyferry 계정의 이메일 주소가 됩니다.',
  confirm_button: '새 주소 확인',
  confirm_ignore: '요청하지 않았다면 이 메일을 무시하세요. 아무것도 바뀌지 않습니다.',
  change_requested_subject: 'Skyferry 이메일 주소 변경 요청',
  change_requested_body:
    'Skyferry 계정에 로그인한 누군가가 이메일 주소를 {email}(으)로 바꾸도록 요청했습니다. 그 주소로 보낸 링크를 열어야만 바뀝니다.',
  change_requested_warning: '본인이 아니라면 지금 비밀번호를 변경하세요. 다른 모든 기기에서도 로그아웃됩니다.',
  changed_subject: 'Skyferry 이메일 주소가 변경되었습니다',
  changed_body: '이제 Skyferry 계정의 이메일 주소는 {email}입니다. 앞으로 계정 관련 메일은 그 주소로 갑니다.',
  changed_warning: '본인이 한 일이 아니라면 이 Skyferry 서버의 운영자에게 문의하세요.',
  password_changed_subject: 'Skyferry 비밀번호가 변경되었습니다',
  password_changed_body: 'Skyferry 계정 {email}의 비밀번호가 변경되었고, 다른 기기에서는 로그아웃되었습니다.',
  password_changed_warning:
    '본인이 한 일이 아니라면 로그인 페이지의 "비밀번호를 잊으셨나요?"에서 새 비밀번호를 설정하세요.',
  link_fallback: '버튼이 작동하지 않으면 이 주소를 브라우저에 복사하세요:',
  footer: '{url}의 Skyferry 서버에서 보냈습니다.',
};

const nl: AccountMailStrings = {
  reset_subject: 'Een nieuw Skyferry-wachtwoord instellen',
  reset_body:
    'Iemand, hopelijk u, heeft gevraagd een nieuw wachtwoord in te stellen voor het Skyferry-account {email}. Open deze link binnen {minutes} minuten om er een te kiezen. Hij werkt één keer.',
  reset_button: 'Nieuw wachtwoord instellen',
  reset_ignore: 'Hebt u hier niet om gevraagd, negeer deze e-mail dan: uw wachtwoord blijft zoals het is.',
  confirm_subject: 'Bevestig uw nieuwe e-mailadres voor Skyferry',
  confirm_body: 'Open deze link binnen {hours} uur om {email} het e-mailadres van uw Skyferry-account te maken.',
  confirm_button: 'Nieuw adres bevestigen',
  confirm_ignore: 'Hebt u hier niet om gevraagd, negeer deze e-mail dan: er verandert niets.',
  change_requested_subject: 'Het e-mailadres van uw Skyferry-account wordt gewijzigd',
  change_requested_body:
    'Iemand die is aangemeld bij uw Skyferry-account heeft gevraagd het e-mailadres te wijzigen in {email}. Het verandert pas wanneer de link die naar dat adres is gestuurd, wordt geopend.',
  change_requested_warning:
    'Was u dit niet, wijzig dan nu uw wachtwoord: daarmee worden ook alle andere apparaten afgemeld.',
  changed_subject: 'Het e-mailadres van uw Skyferry-account is gewijzigd',
  changed_body:
    'Het e-mailadres van uw Skyferry-account is nu {email}. E-mails over het account gaan voortaan daarheen.',
  changed_warning: 'Was u dit niet, neem dan contact op met de beheerder van deze Skyferry-server.',
  password_changed_subject: 'Uw Skyferry-wachtwoord is gewijzigd',
  password_changed_body:
    'Het wachtwoord van uw Skyferry-account {email} is gewijzigd en de andere apparaten zijn afgemeld.',
  password_changed_warning:
    'Was u dit niet, stel dan een nieuw wachtwoord in met "Wachtwoord vergeten?" op de aanmeldpagina.',
  link_fallback: 'Werkt de knop niet, kopieer dit adres dan naar uw browser:',
  footer: 'Verzonden door de Skyferry-server op {url}.',
};

export const ACCOUNT_MAIL_STRINGS: Record<Language, AccountMailStrings> = {
  en: ACCOUNT_MAIL_EN,
  ar,
  br,
  de,
  es,
  fr,
  it,
  ja,
  ko,
  nl,
};

/** An account-mail string in a language, with `{name}` placeholders filled. */
export function accountMailText(
  lang: Language,
  key: AccountMailKey,
  params: Record<string, string | number> = {},
): string {
  const template = ACCOUNT_MAIL_STRINGS[lang]?.[key] ?? ACCOUNT_MAIL_EN[key];
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}
