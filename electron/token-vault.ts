// The admin token at rest: only as OS-keychain ciphertext (Electron's safeStorage), injected
// here as an interface so the rules are testable without Electron.

export interface SafeStorageLike {
  isEncryptionAvailable(): boolean;
  encryptString(plain: string): Buffer;
  decryptString(cipher: Buffer): string;
  /** Linux only (Electron's safeStorage); absent elsewhere. */
  getSelectedStorageBackend?(): string;
}

/**
 * Whether a token may be written to disk. On Linux without a keyring Electron still "encrypts",
 * with a password built into Chromium (backend `basic_text`): anyone who can read the settings
 * file could read the token, so that counts as no encryption.
 */
export function canSeal(safe: SafeStorageLike): boolean {
  return safe.isEncryptionAvailable() && safe.getSelectedStorageBackend?.() !== 'basic_text';
}

export function sealToken(safe: SafeStorageLike, token: string): string | null {
  if (!canSeal(safe)) return null;
  return safe.encryptString(token).toString('base64');
}

/** null when there is no token, or it cannot be decrypted (another user, keychain reset). */
export function openToken(safe: SafeStorageLike, cipher: string | null): string | null {
  if (!cipher || !safe.isEncryptionAvailable()) return null;
  try {
    return safe.decryptString(Buffer.from(cipher, 'base64'));
  } catch {
    return null;
  }
}
