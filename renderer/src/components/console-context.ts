// Components reach the operator actions through context, never the API client.
import { createContext, useContext } from 'react';
import type { ConsoleActions } from '../live/console-actions.ts';

export const ConsoleContext = createContext<ConsoleActions | null>(null);

export function useActions(): ConsoleActions {
  const a = useContext(ConsoleContext);
  if (!a) throw new Error('ConsoleContext missing');
  return a;
}
