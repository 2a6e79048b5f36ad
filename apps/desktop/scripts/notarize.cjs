// electron-builder afterSign hook: notarises the signed macOS app with Apple's notary service
// (@electron/notarize, which electron-builder brings), when the credentials are set:
// APPLE_ID, APPLE_APP_SPECIFIC_PASSWORD and APPLE_TEAM_ID. Without them the build is left
// unnotarised (fine for local testing; Gatekeeper warns on other machines).
exports.default = async function notarize(context) {
  if (context.electronPlatformName !== 'darwin') return;
  const { APPLE_ID, APPLE_APP_SPECIFIC_PASSWORD, APPLE_TEAM_ID } = process.env;
  if (!APPLE_ID || !APPLE_APP_SPECIFIC_PASSWORD || !APPLE_TEAM_ID) {
    console.warn('notarize: APPLE_ID, APPLE_APP_SPECIFIC_PASSWORD or APPLE_TEAM_ID unset, skipping');
    return;
  }
  const { notarize } = await import('@electron/notarize');
  const appName = context.packager.appInfo.productFilename;
  await notarize({
    appPath: `${context.appOutDir}/${appName}.app`,
    appleId: APPLE_ID,
    appleIdPassword: APPLE_APP_SPECIFIC_PASSWORD,
    teamId: APPLE_TEAM_ID,
  });
};
