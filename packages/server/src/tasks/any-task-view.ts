import { h3TaskView } from '../h3/h3-view.js';
import type { TaskRow } from './task-store.js';
import { taskView } from './task-view.js';

/** A task of any family as its creating key reads it: H3 tasks have their own shape (spec 2.6). */
export function anyTaskView(row: TaskRow) {
  return row.kind === 'h3' ? h3TaskView(row) : taskView(row);
}
