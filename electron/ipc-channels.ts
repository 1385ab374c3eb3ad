// The few IPC channels between preload and main; named once so the two cannot drift.
export const IPC = {
  getHubUrl: 'paprika:get-hub-url',
  getSettings: 'paprika:get-settings',
  saveSettings: 'paprika:save-settings',
  openExternal: 'paprika:open-external',
} as const;
