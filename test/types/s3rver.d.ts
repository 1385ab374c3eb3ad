// s3rver ships no types; the S3 asset store test uses only its constructor, run() and close().
declare module 's3rver';
