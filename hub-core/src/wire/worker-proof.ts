// How a worker proves its id at every link, without the hub keeping its secret.
//
// The secret is 32 random bytes (hex) the hub hands out once, at registration. The hub stores
// only its verifier k = sha256(secret): a fast hash is enough here, because a slow one
// (scrypt, argon2) only protects guessable secrets, and 256 random bits cannot be guessed.
// At each link the hub sends a fresh nonce; the worker answers with
// proof = HMAC-SHA256(key = k, nonce + worker_id), which the hub recomputes from k.
//
// The trade-off, chosen on purpose: k is what a link needs, so someone who reads the
// credentials table can link as that worker (not learn the secret, and not re-register the
// id, which needs the secret itself). Whoever reads that database can already rewrite every
// job and result in it, so this gives away nothing new. The alternative — send the secret in
// hello and compare hashes — would keep the database useless for linking, but hand the
// secret to anyone who can read the link, and links often run as plain ws:// inside the LAN.
// With the challenge, a sniffed link yields one proof for one nonce, which never comes again.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

const HEX64 = /^[0-9a-f]{64}$/;

/** k = sha256(secret), hex: what the hub stores, and the HMAC key of every proof. */
export function secretVerifier(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** What the worker sends in hello for this nonce (64 hex digits: fixed length, so nonce+id splits one way only). */
export function linkProof(verifier: string, nonce: string, workerId: string): string {
  return createHmac('sha256', Buffer.from(verifier, 'hex')).update(`${nonce}${workerId}`, 'utf8').digest('hex');
}

/** Constant-time check of a presented proof against the stored verifier. */
export function proofMatches(verifier: string, nonce: string, workerId: string, proof: string | undefined): boolean {
  if (!proof || !HEX64.test(proof) || !HEX64.test(verifier) || !HEX64.test(nonce)) return false;
  return timingSafeEqual(Buffer.from(linkProof(verifier, nonce, workerId), 'hex'), Buffer.from(proof, 'hex'));
}

/** Constant-time check of a presented secret (re-registration) against the stored verifier. */
export function secretMatches(verifier: string, secret: string | undefined): boolean {
  if (!secret || !HEX64.test(verifier)) return false;
  return timingSafeEqual(Buffer.from(secretVerifier(secret), 'hex'), Buffer.from(verifier, 'hex'));
}
