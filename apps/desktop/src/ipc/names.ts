/**
 * Every IPC channel between the preload bridge and the main process (their argument schemas are
 * in channels.ts: the preload needs only the names).
 */
export const CHANNELS = {
  windowMinimize: 'window:minimize',
  windowToggleMaximize: 'window:toggle-maximize',
  windowClose: 'window:close',
  windowIsMaximized: 'window:is-maximized',
  chooseDirectory: 'dialog:choose-directory',
  updateCheck: 'update:check',
  updateDownload: 'update:download',
  updateInstall: 'update:install',
  updateState: 'update:state',
  logOpenFolder: 'log:open-folder',
  logRead: 'log:read',
  downloadGetPath: 'download:get-path',
  downloadSetPath: 'download:set-path',
  downloadSave: 'download:save',
  downloadOpen: 'download:open',
  downloadShow: 'download:show',
  traySetTransfers: 'tray:set-transfers',
  notifyTaskEnded: 'notify:task-ended',
  connectionGet: 'connection:get',
  connectionChange: 'connection:change',
  connectionSet: 'connection:set',
  oauthRedirectUri: 'oauth:redirect-uri',
} as const;

export type Channel = (typeof CHANNELS)[keyof typeof CHANNELS];

/** Messages the main process sends to the page. */
export const EVENTS = {
  maximized: 'event:maximized',
  updateState: 'event:update-state',
  download: 'event:download',
  connectionStatus: 'event:connection-status',
} as const;

export type EventName = (typeof EVENTS)[keyof typeof EVENTS];
