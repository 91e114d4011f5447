// The stateful processor of examples/session-tracker.mjs (not an example itself: every worker
// imports this module, as a udf module is imported). In the style of Spark's transformWithState
// docs: a class with init (declaring the state variables), handleInputRows and handleExpiredTimer.
//
// Per user it keeps the open session (a ValueState of a struct: first and last event time, number
// of events) and the pages visited in it (a ListState of STRING), and one event-time timer at the
// last event plus the inactivity gap. A session ends, and its summary row is emitted, either when
// the timer fires (the watermark passed the gap after the last event: closed_by 'timeout') or when
// an event comes more than the gap after the last one, before the timer fired ('gap').

/** Inactivity that ends a session. */
export const GAP_MS = 30 * 60 * 1000;

export class SessionTracker {
  init(handle) {
    this.handle = handle;
    this.session = handle.getValueState('session', 'start TIMESTAMP, last TIMESTAMP, events LONG');
    this.pages = handle.getListState('pages', 'STRING');
  }

  *handleInputRows(key, rows) {
    // A batch may bring a user's events in any order: take them by event time.
    const events = [...rows].sort((a, b) => a.ts - b.ts);
    let session = this.session.get();
    let pages = session === null ? [] : [...this.pages.get()];
    const timerBefore = session === null ? null : session.last.getTime() + GAP_MS;
    for (const e of events) {
      if (session !== null && e.ts.getTime() - session.last.getTime() > GAP_MS) {
        yield summary(key, session, pages, 'gap');
        session = null;
        pages = [];
      }
      if (session === null) session = { start: e.ts, last: e.ts, events: 0 };
      session.events += 1;
      if (e.ts < session.start) session.start = e.ts;
      if (e.ts > session.last) session.last = e.ts;
      pages.push(e.page);
    }
    this.session.update(session);
    this.pages.put(pages);
    // One timer per user: at the open session's last event plus the gap.
    const timer = session.last.getTime() + GAP_MS;
    if (timerBefore !== timer) {
      if (timerBefore !== null) this.handle.deleteTimer(timerBefore);
      this.handle.registerTimer(timer);
    }
  }

  *handleExpiredTimer(key) {
    const session = this.session.get();
    if (session !== null) yield summary(key, session, [...this.pages.get()], 'timeout');
    this.session.clear();
    this.pages.clear();
  }
}

function summary(key, session, pages, closedBy) {
  return {
    user: key.user,
    session_start: session.start,
    session_end: session.last,
    events: session.events,
    pages: pages.join(' > '),
    closed_by: closedBy,
  };
}
