import { z } from 'zod';
import { CHANNELS, type Channel } from './names.ts';

export { CHANNELS, EVENTS, type Channel, type EventName } from './names.ts';

const none = z.tuple([]);
/** A path on this computer, as a folder chooser or the download list gives it. */
const localPath = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => !p.includes('\0'), 'no NUL');
const text = (max: number) => z.string().max(max);

export const connectionChoiceSchema = z.discriminatedUnion('mode', [
  z.object({ mode: z.literal('local') }).strict(),
  z.object({ mode: z.literal('remote'), url: z.string().min(1).max(2048) }).strict(),
]);
export type ConnectionChoice = z.infer<typeof connectionChoiceSchema>;

/**
 * The schema of the arguments each channel accepts. The router refuses a call whose arguments do
 * not match exactly, so the page can send nothing the main process did not expect.
 */
export const CHANNEL_ARGS = {
  [CHANNELS.windowMinimize]: none,
  [CHANNELS.windowToggleMaximize]: none,
  [CHANNELS.windowClose]: none,
  [CHANNELS.windowIsMaximized]: none,
  [CHANNELS.chooseDirectory]: z.tuple([z.object({ defaultPath: localPath.optional() }).strict().optional()]),
  [CHANNELS.updateCheck]: none,
  [CHANNELS.updateDownload]: none,
  [CHANNELS.updateInstall]: none,
  [CHANNELS.updateState]: none,
  [CHANNELS.logOpenFolder]: none,
  [CHANNELS.logRead]: none,
  [CHANNELS.downloadGetPath]: none,
  [CHANNELS.downloadSetPath]: z.tuple([z.union([z.literal(''), localPath])]),
  [CHANNELS.downloadSave]: z.tuple([
    z
      .object({
        url: z.string().min(1).max(8192),
        name: z.string().min(1).max(1024),
        directory: localPath.optional(),
      })
      .strict(),
  ]),
  [CHANNELS.downloadOpen]: z.tuple([localPath]),
  [CHANNELS.downloadShow]: z.tuple([localPath]),
  [CHANNELS.traySetTransfers]: z.tuple([
    z
      .array(
        z
          .object({
            id: z.string().min(1).max(100),
            name: text(1024),
            percent: z.number().min(0).max(100).nullable(),
          })
          .strict(),
      )
      .max(1000),
  ]),
  [CHANNELS.notifyTaskEnded]: z.tuple([z.object({ title: text(200).min(1), body: text(1000) }).strict()]),
  [CHANNELS.connectionGet]: none,
  [CHANNELS.connectionChange]: none,
  [CHANNELS.connectionSet]: z.tuple([connectionChoiceSchema]),
  [CHANNELS.oauthRedirectUri]: none,
} satisfies Record<Channel, z.ZodType<unknown[]>>;

export type ChannelArgs<C extends Channel> = z.infer<(typeof CHANNEL_ARGS)[C]>;

/**
 * Which pages may use a channel: the web app of the server the window shows, or the shell's own
 * start page (where the user picks a server). The start page may not touch files or updates; the
 * web app may not point the shell at another server.
 */
export type Audience = 'app' | 'start' | 'both';

export const CHANNEL_AUDIENCE: Record<Channel, Audience> = {
  [CHANNELS.windowMinimize]: 'both',
  [CHANNELS.windowToggleMaximize]: 'both',
  [CHANNELS.windowClose]: 'both',
  [CHANNELS.windowIsMaximized]: 'both',
  [CHANNELS.chooseDirectory]: 'app',
  [CHANNELS.updateCheck]: 'both',
  [CHANNELS.updateDownload]: 'both',
  [CHANNELS.updateInstall]: 'both',
  [CHANNELS.updateState]: 'both',
  [CHANNELS.logOpenFolder]: 'both',
  [CHANNELS.logRead]: 'app',
  [CHANNELS.downloadGetPath]: 'app',
  [CHANNELS.downloadSetPath]: 'app',
  [CHANNELS.downloadSave]: 'app',
  [CHANNELS.downloadOpen]: 'app',
  [CHANNELS.downloadShow]: 'app',
  [CHANNELS.traySetTransfers]: 'app',
  [CHANNELS.notifyTaskEnded]: 'app',
  [CHANNELS.connectionGet]: 'both',
  [CHANNELS.connectionChange]: 'app',
  [CHANNELS.connectionSet]: 'start',
  [CHANNELS.oauthRedirectUri]: 'app',
};
