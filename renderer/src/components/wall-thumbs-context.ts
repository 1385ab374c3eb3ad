// The wall's thumbnail socket reaches its tiles through context: tiles subscribe, the wall owns it.
import { createContext } from 'react';
import type { WallThumbs } from '../live/wall-thumbs.ts';

export const WallThumbsContext = createContext<WallThumbs | null>(null);
