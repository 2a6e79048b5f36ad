/** An external app the operator registered (migration 0016). `functions` is JSON. */
export interface EcologyAppsTable {
  app_id: number;
  name: string;
  description: string;
  icon: string;
  url: string;
  origin: string;
  functions: string;
  state: number;
  mandatory_login: number;
  created_by: string | null;
  created_at: number;
  updated_at: number;
}

/** Which apps an account opened, how often and when last (migration 0016). */
export interface EcologyAppUsageTable {
  user_id: string;
  app_id: number;
  uses: number;
  used_at: number;
}

/** A token handed to an embedded app: its hash, whose, and the files it reaches (`grants`, JSON). */
export interface EcologyAppTokensTable {
  token_hash: string;
  app_id: number;
  user_id: string | null;
  session_id: string | null;
  visitor_id: string | null;
  grants: string;
  writable: number;
  created_at: number;
  expires_at: number;
}

export interface EcologyTables {
  ecology_apps: EcologyAppsTable;
  ecology_app_usage: EcologyAppUsageTable;
  ecology_app_tokens: EcologyAppTokensTable;
}
