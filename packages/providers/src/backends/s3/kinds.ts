/** The cloud kinds served by the S3 backend. */
export const S3_KINDS = ['amazon_s3', 'wasabi', 'backblaze_b2', 's3_compatible'] as const;
export type S3Kind = (typeof S3_KINDS)[number];
