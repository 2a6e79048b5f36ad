import {
  envelopeOf,
  HEADERS,
  initDataSchema,
  initQuerySchema,
  ok,
  tempTokenDataSchema,
  toLanguage,
  type InitData,
} from '@skyferry/contract';
import { allowedClientOrigin, publicBase } from '../../account-pages/origins.ts';
import type { AppContext } from '../../context.ts';
import type { App } from '../app-types.ts';
import { bearerToken, optionalIdentity } from '../auth.ts';
import { errors } from '../errors.ts';
import { requestLanguage } from '../language.ts';

/** The survey prompt rules (spec section 4): every 30 days, for paid users who have clouds. */
const POPUP_NPS_RULES = { interval_day: 30, condition_index_list: [0, 1] };

export default async function initRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/api/v2/init',
    {
      preHandler: optionalIdentity(ctx),
      schema: {
        tags: ['accounts'],
        summary: 'Start-up data: licences, account page URLs, the visitor token, billing mode, service notice',
        description:
          'No authentication needed. A valid `x-temp-authorization` is echoed back as `temp_token`; otherwise a new ' +
          'visitor identity is issued (none for a signed-in user, nor for an address that made 60 in the last hour: ' +
          '`temp_token` is then empty). `origin` (the client origin) must be PUBLIC_URL, the server itself, or in ' +
          'SKYFERRY_ALLOWED_ORIGINS; the account pages post their messages there.',
        querystring: initQuerySchema,
        response: { 200: envelopeOf(initDataSchema) },
      },
    },
    async (request) => {
      const raw = request.headers[HEADERS.tempAuthorization];
      const given = bearerToken(Array.isArray(raw) ? raw[0] : raw);
      // A signed-in user needs no new visitor; an address past its share of visitors gets none ('').
      const tempToken =
        request.visitor && given
          ? given
          : request.identity?.kind === 'user'
            ? ''
            : ((await ctx.accounts.newVisitor({ ip: request.ip })) ?? '');
      const base = publicBase(ctx.config, request);
      const lang = toLanguage(request.query.lang) ?? requestLanguage(request);
      const origin = allowedClientOrigin(ctx.config, request, request.query.origin) ?? new URL(base).origin;
      const page = (name: string, noCookies: boolean) => {
        const q = new URLSearchParams({ origin, lang });
        if (noCookies) q.set('cookies', '0');
        return `${base}/account/${name}?${q.toString()}`;
      };
      const c = ctx.config;
      const data: InitData = {
        licenses: ctx.users.licenseOffers(),
        popup_nps_rules: POPUP_NPS_RULES,
        sign_in_url: page('signin', false),
        sign_out_url: page('signout', false),
        sign_in_url_disable_cookies: page('signin', true),
        sign_out_url_disable_cookies: page('signout', true),
        // The WOPI host's address only when an office server will call it (services/wopi).
        wopi_url: c.wopiClientUrl ? `${base}/wopi` : '',
        mandatory_upgrade: false,
        temp_token: tempToken,
        billing_mode: c.billingMode,
        service_notice: c.serviceNotice
          ? { text: c.serviceNotice, date: c.serviceNoticeDate ?? '', contact_url: c.serviceNoticeUrl ?? '' }
          : null,
        mail_delivery: c.smtpUrl !== undefined,
      };
      return ok(data);
    },
  );

  app.get(
    '/api/token',
    {
      schema: {
        tags: ['accounts'],
        summary: 'A new visitor identity',
        description:
          'Send `access_token` as `x-temp-authorization` while no user is signed in. At most 60 new identities an ' +
          'hour per address (code 429001); one unused for a day (no cloud) or for 30 days is forgotten.',
        response: { 200: envelopeOf(tempTokenDataSchema) },
      },
    },
    async (request) => {
      const token = await ctx.accounts.newVisitor({ ip: request.ip });
      if (!token) throw errors.rateLimited();
      return ok({ token_type: 'Bearer' as const, access_token: token });
    },
  );
}
