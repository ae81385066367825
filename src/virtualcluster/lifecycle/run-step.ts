// How a lifecycle operation reports progress: each named step runs through a RunStep (the CLI shows a spinner with
// the title while the step runs); without one the steps just run.

export type RunStep = <T>(title: string, work: () => Promise<T>) => Promise<T>;

export const runQuietly: RunStep = (_title, work) => work();
