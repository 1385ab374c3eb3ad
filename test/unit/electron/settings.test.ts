import { describe, expect, it } from 'vitest';
import { applySettingsInput, DEFAULT_SETTINGS, normaliseHubUrl, parseSettingsFile, serialiseSettings, settingsView, tokenCipherFor, validateSettingsInput } from '../../../electron/settings.ts';

describe('desktop settings file', () => {
  it('uses defaults when the file is missing, not JSON or not an object', () => {
    expect(parseSettingsFile(null)).toEqual({ settings: DEFAULT_SETTINGS, problems: [] });
    expect(parseSettingsFile('{oops').problems).toHaveLength(1);
    expect(parseSettingsFile('[1]').settings).toEqual(DEFAULT_SETTINGS);
  });

  it('round-trips what it writes', () => {
    const s = { mode: 'remote' as const, remoteUrl: 'https://hub.example:8443', embeddedPort: 9000, tokenCipher: 'YWJj', tokenHub: 'https://hub.example:8443' };
    expect(parseSettingsFile(serialiseSettings(s))).toEqual({ settings: s, problems: [] });
  });

  it('falls back to the embedded hub when remote mode has no usable URL', () => {
    const { settings, problems } = parseSettingsFile(JSON.stringify({ mode: 'remote', remoteUrl: 'javascript:alert(1)' }));
    expect(settings.mode).toBe('embedded');
    expect(settings.remoteUrl).toBe('');
    expect(problems.length).toBe(2);
  });

  it('drops bad fields one by one and keeps the good ones', () => {
    const { settings } = parseSettingsFile(JSON.stringify({ mode: 'cloud', embeddedPort: 70000, remoteUrl: 'http://10.0.0.1:8080/', tokenCipher: '<script>' }));
    expect(settings).toEqual({ ...DEFAULT_SETTINGS, remoteUrl: 'http://10.0.0.1:8080' });
  });
});

describe('the stored token and the hub it is for', () => {
  it('binds a token in a file written before tokenHub to the URL saved beside it, or drops it', () => {
    const old = parseSettingsFile(JSON.stringify({ mode: 'remote', remoteUrl: 'https://prod.example', tokenCipher: 'YWJj' }));
    expect(old.settings.tokenHub).toBe('https://prod.example');
    const orphan = parseSettingsFile(JSON.stringify({ mode: 'embedded', tokenCipher: 'YWJj' }));
    expect(orphan.settings.tokenCipher).toBeNull();
    expect(orphan.problems.join()).toMatch(/names no hub URL/);
    const bad = parseSettingsFile(JSON.stringify({ remoteUrl: 'https://prod.example', tokenCipher: 'YWJj', tokenHub: 'javascript:x' }));
    expect(bad.settings.tokenCipher).toBeNull();
  });

  it('gives the token to the hub it was entered for only', () => {
    const s = { ...DEFAULT_SETTINGS, mode: 'remote' as const, remoteUrl: 'https://prod.example', tokenCipher: 'YWJj', tokenHub: 'https://prod.example' };
    expect(tokenCipherFor(s, 'https://prod.example')).toBe('YWJj');
    // `--hub http://attacker.example` or a second URL typed into the settings
    expect(tokenCipherFor(s, 'http://attacker.example:18150')).toBeNull();
    expect(tokenCipherFor(s, 'http://prod.example')).toBeNull();
    expect(tokenCipherFor({ ...s, tokenCipher: null }, 'https://prod.example')).toBeNull();
  });

  it('keeps a token bound to its hub when the URL changes without a new token', () => {
    const seal = (t: string) => Buffer.from(`enc:${t}`).toString('base64');
    const cur = { ...DEFAULT_SETTINGS, mode: 'remote' as const, remoteUrl: 'https://prod.example', tokenCipher: 'YWJj', tokenHub: 'https://prod.example' };
    const moved = applySettingsInput(cur, { mode: 'remote', remoteUrl: 'http://test-hub.example', embeddedPort: 8080 }, seal);
    expect(moved.ok).toBe(true);
    if (!moved.ok) return;
    expect(tokenCipherFor(moved.value, 'http://test-hub.example')).toBeNull();
    expect(settingsView(moved.value, true)).toMatchObject({ hasToken: true, tokenHub: 'https://prod.example' });
    const entered = applySettingsInput(moved.value, { mode: 'remote', remoteUrl: 'http://test-hub.example', embeddedPort: 8080, adminToken: 'test-tok' }, seal);
    expect(entered.ok && entered.value.tokenHub).toBe('http://test-hub.example');
    expect(applySettingsInput(cur, { mode: 'embedded', remoteUrl: '', embeddedPort: 8080, adminToken: 'tok' }, seal).ok).toBe(false);
  });
});

describe('hub URL rules', () => {
  it.each([
    ['http://10.0.0.5:8080', 'http://10.0.0.5:8080'],
    ['https://hub.example/paprika/', 'https://hub.example/paprika'],
    ['  http://127.0.0.1:8080/  ', 'http://127.0.0.1:8080'],
    ['file:///etc/passwd', null],
    ['ws://hub:8080', null],
    ['http://admin:secret@hub:8080', null],
    ['http://hub:8080/?token=x', null],
    ['not a url', null],
  ])('%s → %s', (input, out) => expect(normaliseHubUrl(input)).toBe(out));
});

describe('saving settings from the renderer', () => {
  const cur = { ...DEFAULT_SETTINGS, tokenCipher: 'b2xk', tokenHub: 'http://h:1' };
  const seal = (t: string) => Buffer.from(`enc:${t}`).toString('base64');

  it('rejects malformed input with one message per problem', () => {
    const r = validateSettingsInput({ mode: 'remote', remoteUrl: '', embeddedPort: -1, adminToken: 'a b' });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors).toHaveLength(3);
    expect(validateSettingsInput(null).ok).toBe(false);
  });

  it('keeps, replaces or removes the token as asked, always encrypted', () => {
    const keep = applySettingsInput(cur, { mode: 'embedded', remoteUrl: '', embeddedPort: 8080 }, seal);
    expect(keep.ok && keep.value.tokenCipher).toBe('b2xk');
    const replace = applySettingsInput(cur, { mode: 'remote', remoteUrl: 'http://h:1', embeddedPort: 8080, adminToken: 'tok' }, seal);
    expect(replace.ok && Buffer.from(replace.value.tokenCipher!, 'base64').toString()).toBe('enc:tok');
    const remove = applySettingsInput(cur, { mode: 'embedded', remoteUrl: '', embeddedPort: 8080, adminToken: '' }, seal);
    expect(remove.ok && remove.value.tokenCipher).toBeNull();
  });

  it('refuses to store a token when OS encryption is unavailable (never plaintext)', () => {
    const r = applySettingsInput(cur, { mode: 'remote', remoteUrl: 'http://h:1', embeddedPort: 8080, adminToken: 'tok' }, () => null);
    expect(r.ok).toBe(false);
  });

  it('never shows the token or its ciphertext to the renderer', () => {
    const v = settingsView(cur, true);
    expect(v).toEqual({ mode: 'embedded', remoteUrl: '', embeddedPort: 8080, hasToken: true, tokenHub: 'http://h:1', encryptionAvailable: true });
    expect(JSON.stringify(v)).not.toContain('b2xk');
  });
});
