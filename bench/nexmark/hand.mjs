// Hand-written single-thread baselines of the Nexmark queries (queries.mjs): for each query, a plain
// loop that generates the events it reads (NexmarkGenerator, the column batches the engine reads too)
// and computes the query's final result, the one its `duckdb` SQL defines, as rows keyed by the
// query's `columns` (timestamps in epoch ms). Numbers are read straight from the Float64Arrays,
// strings as dictionary codes; state is Maps keyed by numbers or strings; a row that is filtered out
// costs no object. A join builds a hash table of one side (people or auctions) and probes it with
// the other; the generator's person and auction ids are unique, which those tables rely on.
// q10's result is its rows; the files its sink writes them to are not written here.
import { NexmarkGenerator } from '@sluice/executor';

const CHUNK = 65_536;
const SECOND = 1000;
const DAY = 86_400_000;
const HOUR = 3_600_000;

/** Calls fn(length, columns) for each batch of events [0, ev.events) of `table`. */
function scan(ev, table, fn) {
  const gen = new NexmarkGenerator({ table, seed: ev.seed, eventsPerSecond: ev.eventsPerSecond, startTimestamp: ev.startTimestamp });
  gen.forEachBatch(0, ev.events, CHUNK, (batch) => fn(batch.length, batch.columns));
}

const nums = (cols, name) => cols.get(name).values;

/** 'yyyy-MM-dd' of a UTC day number. */
const dayString = (day) => new Date(day * DAY).toISOString().slice(0, 10);
/** 'HH:mm' of epoch ms, UTC. */
const minuteString = (t) => new Date(t).toISOString().slice(11, 16);

/** 0.908 * price, exactly as the decimal product cast to a double (price * 908 is an exact integer). */
const converted = (price) => (price * 908) / 1000;

/** The price band of q15-q17 as a bit: 1 below 10,000; 2 below 1,000,000; else 4. */
const band = (price) => (price < 10_000 ? 1 : price < 1_000_000 ? 2 : 4);

/** Whether a bid ranks before entry e (q6, q9, q19): the higher price, then the earlier, the lower bidder, the smaller extra. */
function ranksBefore(price, dateTime, bidder, extra, e) {
  if (price !== e.price) return price > e.price;
  if (dateTime !== e.dateTime) return dateTime < e.dateTime;
  if (bidder !== e.bidder) return bidder < e.bidder;
  return extra < e.extra;
}

/** Sets bit in a distinct-values map (value -> the bands it was seen in). */
function mark(map, value, bit) {
  const old = map.get(value);
  if (old === undefined) map.set(value, bit);
  else if ((old & bit) === 0) map.set(value, old | bit);
}

/** q15-q16's counts of one group: bids per band, and distinct bidders and auctions, overall and per band. */
class Bands {
  constructor() {
    this.total = 0;
    this.r1 = 0;
    this.r2 = 0;
    this.r3 = 0;
    this.bidders = new Map();
    this.auctions = new Map();
    this.maxTime = -Infinity;
  }

  add(price, bidder, auction, dateTime) {
    const bit = band(price);
    this.total++;
    if (bit === 1) this.r1++;
    else if (bit === 2) this.r2++;
    else this.r3++;
    mark(this.bidders, bidder, bit);
    mark(this.auctions, auction, bit);
    if (dateTime > this.maxTime) this.maxTime = dateTime;
  }

  /** Writes the band columns into row. */
  into(row) {
    row.total_bids = this.total;
    row.rank1_bids = this.r1;
    row.rank2_bids = this.r2;
    row.rank3_bids = this.r3;
    for (const [what, map] of [
      ['bidders', this.bidders],
      ['auctions', this.auctions],
    ]) {
      let n1 = 0;
      let n2 = 0;
      let n3 = 0;
      for (const bits of map.values()) {
        n1 += bits & 1;
        n2 += (bits >> 1) & 1;
        n3 += bits >> 2;
      }
      row[`total_${what}`] = map.size;
      row[`rank1_${what}`] = n1;
      row[`rank2_${what}`] = n2;
      row[`rank3_${what}`] = n3;
    }
    return row;
  }
}

/** The auction table's columns. */
const AUCTION_COLUMNS = ['id', 'itemName', 'description', 'initialBid', 'reserve', 'dateTime', 'expires', 'seller', 'category', 'extra'];

/**
 * Each auction's winning bid (q6, q9): the first by ranksBefore among the bids made while it was
 * open. Returns A, the auctions' `columns` (id, dateTime, expires among them) as arrays by slot, and
 * best, per slot the winner { price, dateTime, bidder, extra } or null.
 */
function auctionWinners(ev, columns) {
  const A = Object.fromEntries(columns.map((c) => [c, []]));
  const slots = new Map(); // auction id -> slot
  scan(ev, 'auction', (n, cols) => {
    const id = nums(cols, 'id');
    for (let i = 0; i < n; i++) slots.set(id[i], A.id.length + i);
    for (const c of columns) {
      const to = A[c];
      const v = cols.get(c);
      if (v.kind === 'num') for (let i = 0; i < n; i++) to.push(v.values[i]);
      else for (let i = 0; i < n; i++) to.push(v.dict[v.codes[i]]);
    }
  });
  const opens = A.dateTime;
  const expires = A.expires;
  const best = new Array(A.id.length).fill(null);
  scan(ev, 'bid', (n, cols) => {
    const auction = nums(cols, 'auction');
    const bidder = nums(cols, 'bidder');
    const price = nums(cols, 'price');
    const dateTime = nums(cols, 'dateTime');
    const { dict, codes } = cols.get('extra');
    for (let i = 0; i < n; i++) {
      const s = slots.get(auction[i]);
      if (s === undefined) continue;
      const t = dateTime[i];
      if (t < opens[s] || t > expires[s]) continue;
      const b = best[s];
      if (b === null) best[s] = { price: price[i], dateTime: t, bidder: bidder[i], extra: dict[codes[i]] };
      else if (ranksBefore(price[i], t, bidder[i], dict[codes[i]], b)) {
        b.price = price[i];
        b.dateTime = t;
        b.bidder = bidder[i];
        b.extra = dict[codes[i]];
      }
    }
  });
  return { A, best };
}

/** The bids of a stateless query, each as the row make(i) of its batch builds (null: filtered out). */
function mapBids(ev, prepare) {
  const out = [];
  scan(ev, 'bid', (n, cols) => {
    const make = prepare(cols);
    for (let i = 0; i < n; i++) {
      const row = make(i);
      if (row !== null) out.push(row);
    }
  });
  return out;
}

export const HAND = {
  // q0: every bid's auction, bidder, price, dateTime, extra.
  q0: (ev) =>
    mapBids(ev, (cols) => {
      const auction = nums(cols, 'auction');
      const bidder = nums(cols, 'bidder');
      const price = nums(cols, 'price');
      const dateTime = nums(cols, 'dateTime');
      const { dict, codes } = cols.get('extra');
      return (i) => ({ auction: auction[i], bidder: bidder[i], price: price[i], dateTime: dateTime[i], extra: dict[codes[i]] });
    }),

  // q1: every bid, its price converted (0.908 * price).
  q1: (ev) =>
    mapBids(ev, (cols) => {
      const auction = nums(cols, 'auction');
      const bidder = nums(cols, 'bidder');
      const price = nums(cols, 'price');
      const dateTime = nums(cols, 'dateTime');
      const { dict, codes } = cols.get('extra');
      return (i) => ({ auction: auction[i], bidder: bidder[i], price: converted(price[i]), dateTime: dateTime[i], extra: dict[codes[i]] });
    }),

  // q2: auction and price of the bids on auctions whose id is a multiple of 123.
  q2: (ev) =>
    mapBids(ev, (cols) => {
      const auction = nums(cols, 'auction');
      const price = nums(cols, 'price');
      return (i) => (auction[i] % 123 === 0 ? { auction: auction[i], price: price[i] } : null);
    }),

  // q3: category-10 auctions joined with their sellers living in OR, ID or CA: name, city, state, auction id.
  q3: (ev) => {
    const people = new Map(); // person id -> slot of names/cities/states
    const names = [];
    const cities = [];
    const states = [];
    scan(ev, 'person', (n, cols) => {
      const id = nums(cols, 'id');
      const name = cols.get('name');
      const city = cols.get('city');
      const state = cols.get('state');
      for (let i = 0; i < n; i++) {
        const s = state.dict[state.codes[i]];
        if (s !== 'OR' && s !== 'ID' && s !== 'CA') continue;
        people.set(id[i], names.length);
        names.push(name.dict[name.codes[i]]);
        cities.push(city.dict[city.codes[i]]);
        states.push(s);
      }
    });
    const out = [];
    scan(ev, 'auction', (n, cols) => {
      const id = nums(cols, 'id');
      const seller = nums(cols, 'seller');
      const category = nums(cols, 'category');
      for (let i = 0; i < n; i++) {
        if (category[i] !== 10) continue;
        const p = people.get(seller[i]);
        if (p !== undefined) out.push({ name: names[p], city: cities[p], state: states[p], id: id[i] });
      }
    });
    return out;
  },

  // q4: per category, the average over its auctions of the highest bid made while the auction was open.
  q4: (ev) => {
    const slots = new Map(); // auction id -> slot
    const opens = [];
    const expires = [];
    const categories = [];
    scan(ev, 'auction', (n, cols) => {
      const id = nums(cols, 'id');
      const dateTime = nums(cols, 'dateTime');
      const exp = nums(cols, 'expires');
      const category = nums(cols, 'category');
      for (let i = 0; i < n; i++) {
        slots.set(id[i], opens.length);
        opens.push(dateTime[i]);
        expires.push(exp[i]);
        categories.push(category[i]);
      }
    });
    const best = new Float64Array(opens.length).fill(-1);
    scan(ev, 'bid', (n, cols) => {
      const auction = nums(cols, 'auction');
      const price = nums(cols, 'price');
      const dateTime = nums(cols, 'dateTime');
      for (let i = 0; i < n; i++) {
        const s = slots.get(auction[i]);
        if (s === undefined) continue;
        const t = dateTime[i];
        if (t >= opens[s] && t <= expires[s] && price[i] > best[s]) best[s] = price[i];
      }
    });
    const perCategory = new Map(); // category -> [sum, count]
    for (let s = 0; s < best.length; s++) {
      if (best[s] < 0) continue;
      const acc = perCategory.get(categories[s]);
      if (acc === undefined) perCategory.set(categories[s], [best[s], 1]);
      else {
        acc[0] += best[s];
        acc[1]++;
      }
    }
    return [...perCategory].map(([category, [sum, count]]) => ({ category, final: sum / count }));
  },

  // q5: per hopping window (10 s every 2 s), the auctions with the most bids in it, and that count.
  q5: (ev) => {
    // Bids counted per 2 s pane and auction; a window is the sum of its five panes.
    const panes = new Map(); // pane number -> Map auction -> count
    let paneNo = NaN;
    let pane = null;
    scan(ev, 'bid', (n, cols) => {
      const auction = nums(cols, 'auction');
      const dateTime = nums(cols, 'dateTime');
      for (let i = 0; i < n; i++) {
        const p = Math.floor(dateTime[i] / (2 * SECOND));
        if (p !== paneNo) {
          paneNo = p;
          pane = panes.get(p);
          if (pane === undefined) {
            pane = new Map();
            panes.set(p, pane);
          }
        }
        const a = auction[i];
        pane.set(a, (pane.get(a) ?? 0) + 1);
      }
    });
    const starts = new Set();
    for (const p of panes.keys()) for (let k = 0; k < 5; k++) starts.add(p - k);
    const out = [];
    for (const w of starts) {
      const counts = new Map();
      for (let p = w; p < w + 5; p++) {
        const m = panes.get(p);
        if (m !== undefined) for (const [a, c] of m) counts.set(a, (counts.get(a) ?? 0) + c);
      }
      let max = 0;
      for (const c of counts.values()) if (c > max) max = c;
      for (const [a, c] of counts) if (c === max) out.push({ auction: a, num: c });
    }
    return out;
  },

  // q6: per seller, for each auction it won a bid on, the average winning price over it and the seller's 10 auctions before it (by winning time, then id).
  q6: (ev) => {
    const { A, best } = auctionWinners(ev, ['id', 'seller', 'dateTime', 'expires']);
    const bySeller = new Map(); // seller -> slots of its auctions with a winner
    for (let s = 0; s < best.length; s++) {
      if (best[s] === null) continue;
      const list = bySeller.get(A.seller[s]);
      if (list === undefined) bySeller.set(A.seller[s], [s]);
      else list.push(s);
    }
    const out = [];
    for (const [seller, list] of bySeller) {
      list.sort((x, y) => best[x].dateTime - best[y].dateTime || A.id[x] - A.id[y]);
      let sum = 0;
      for (let i = 0; i < list.length; i++) {
        sum += best[list[i]].price;
        if (i > 10) sum -= best[list[i - 11]].price;
        out.push({ seller, avg_price: sum / Math.min(i + 1, 11) });
      }
    }
    return out;
  },

  // q7: the bids at the highest price of a tumbling 10 s window, paired with each window whose [end - 10 s, end] holds them.
  q7: (ev) => {
    // Per window: its max price and its bids at that price; and the bids at exactly its end
    // (the next window's first instant) at a price not below its max so far.
    const windows = new Map(); // window number -> { max, atMax: rows, atEnd: rows }
    const windowOf = (w) => {
      let s = windows.get(w);
      if (s === undefined) {
        s = { max: -Infinity, atMax: [], atEnd: [] };
        windows.set(w, s);
      }
      return s;
    };
    let wNo = NaN;
    let win = null;
    scan(ev, 'bid', (n, cols) => {
      const auction = nums(cols, 'auction');
      const bidder = nums(cols, 'bidder');
      const price = nums(cols, 'price');
      const dateTime = nums(cols, 'dateTime');
      const { dict, codes } = cols.get('extra');
      for (let i = 0; i < n; i++) {
        const t = dateTime[i];
        const p = price[i];
        const w = Math.floor(t / (10 * SECOND));
        if (w !== wNo) {
          wNo = w;
          win = windowOf(w);
        }
        if (p >= win.max) {
          if (p > win.max) {
            win.max = p;
            win.atMax = [];
          }
          win.atMax.push({ auction: auction[i], price: p, bidder: bidder[i], dateTime: t, extra: dict[codes[i]] });
        }
        if (t === w * 10 * SECOND) {
          const prev = windowOf(w - 1);
          if (p >= prev.max) prev.atEnd.push({ auction: auction[i], price: p, bidder: bidder[i], dateTime: t, extra: dict[codes[i]] });
        }
      }
    });
    const out = [];
    for (const { max, atMax, atEnd } of windows.values()) {
      if (atMax.length === 0) continue; // no bid of its own: not a window
      for (const row of atMax) out.push(row);
      for (const row of atEnd) if (row.price === max) out.push(row);
    }
    return out;
  },

  // q8: people who opened an auction in the same tumbling 10 s window as they registered: id, name, window start.
  q8: (ev) => {
    const sellers = new Map(); // window number -> Set of sellers
    let wNo = NaN;
    let set = null;
    scan(ev, 'auction', (n, cols) => {
      const seller = nums(cols, 'seller');
      const dateTime = nums(cols, 'dateTime');
      for (let i = 0; i < n; i++) {
        const w = Math.floor(dateTime[i] / (10 * SECOND));
        if (w !== wNo) {
          wNo = w;
          set = sellers.get(w);
          if (set === undefined) {
            set = new Set();
            sellers.set(w, set);
          }
        }
        set.add(seller[i]);
      }
    });
    const out = [];
    scan(ev, 'person', (n, cols) => {
      const id = nums(cols, 'id');
      const dateTime = nums(cols, 'dateTime');
      const name = cols.get('name');
      for (let i = 0; i < n; i++) {
        const w = Math.floor(dateTime[i] / (10 * SECOND));
        if (sellers.get(w)?.has(id[i])) out.push({ id: id[i], name: name.dict[name.codes[i]], starttime: w * 10 * SECOND });
      }
    });
    return out;
  },

  // q9: each auction with its winning bid (the first by ranksBefore among those made while it was open).
  q9: (ev) => {
    const { A, best } = auctionWinners(ev, AUCTION_COLUMNS);
    const out = [];
    for (let s = 0; s < best.length; s++) {
      const b = best[s];
      if (b === null) continue;
      out.push({
        id: A.id[s],
        itemName: A.itemName[s],
        description: A.description[s],
        initialBid: A.initialBid[s],
        reserve: A.reserve[s],
        dateTime: A.dateTime[s],
        expires: A.expires[s],
        seller: A.seller[s],
        category: A.category[s],
        extra: A.extra[s],
        auction: A.id[s],
        bidder: b.bidder,
        price: b.price,
        bid_dateTime: b.dateTime,
        bid_extra: b.extra,
      });
    }
    return out;
  },

  // q10: every bid with its UTC day ('yyyy-MM-dd') and minute ('HH:mm'), the partition columns of its log files.
  q10: (ev) => {
    let minuteNo = NaN; // the minute dt and hm were last made for
    let dt = '';
    let hm = '';
    return mapBids(ev, (cols) => {
      const auction = nums(cols, 'auction');
      const bidder = nums(cols, 'bidder');
      const price = nums(cols, 'price');
      const dateTime = nums(cols, 'dateTime');
      const { dict, codes } = cols.get('extra');
      return (i) => {
        const t = dateTime[i];
        const m = Math.floor(t / 60_000);
        if (m !== minuteNo) {
          minuteNo = m;
          const iso = new Date(m * 60_000).toISOString();
          dt = iso.slice(0, 10);
          hm = iso.slice(11, 16);
        }
        return { auction: auction[i], bidder: bidder[i], price: price[i], dateTime: t, extra: dict[codes[i]], dt, hm };
      };
    });
  },

  // q11: per bidder, its sessions (bids less than 10 s apart): bid count, first bid time, last bid time + 10 s.
  q11: (ev) => {
    // The generator's times never decrease, so each bidder's bids arrive in time order.
    const slots = new Map(); // bidder -> slot
    const bidders = [];
    const starts = [];
    const lasts = [];
    const counts = [];
    const out = [];
    scan(ev, 'bid', (n, cols) => {
      const bidder = nums(cols, 'bidder');
      const dateTime = nums(cols, 'dateTime');
      for (let i = 0; i < n; i++) {
        const b = bidder[i];
        const t = dateTime[i];
        const s = slots.get(b);
        if (s === undefined) {
          slots.set(b, bidders.length);
          bidders.push(b);
          starts.push(t);
          lasts.push(t);
          counts.push(1);
        } else if (t - lasts[s] < 10 * SECOND) {
          if (t < lasts[s]) throw new Error('q11: bids out of time order');
          lasts[s] = t;
          counts[s]++;
        } else {
          out.push({ bidder: b, bid_count: counts[s], starttime: starts[s], endtime: lasts[s] + 10 * SECOND });
          starts[s] = lasts[s] = t;
          counts[s] = 1;
        }
      }
    });
    for (let s = 0; s < bidders.length; s++) out.push({ bidder: bidders[s], bid_count: counts[s], starttime: starts[s], endtime: lasts[s] + 10 * SECOND });
    return out;
  },

  // q12 (processing time, so no fixed windows): per bidder, its number of bids.
  q12: (ev) => {
    const counts = new Map();
    scan(ev, 'bid', (n, cols) => {
      const bidder = nums(cols, 'bidder');
      for (let i = 0; i < n; i++) counts.set(bidder[i], (counts.get(bidder[i]) ?? 0) + 1);
    });
    return [...counts].map(([bidder, bid_count]) => ({ bidder, bid_count }));
  },

  // q13: every bid joined with the side input's value for auction % 10000 (key i -> String(i)).
  q13: (ev) => {
    const side = Array.from({ length: 10_000 }, (_, i) => String(i));
    return mapBids(ev, (cols) => {
      const auction = nums(cols, 'auction');
      const bidder = nums(cols, 'bidder');
      const price = nums(cols, 'price');
      const dateTime = nums(cols, 'dateTime');
      return (i) => {
        const value = side[auction[i] % 10_000];
        return value === undefined ? null : { auction: auction[i], bidder: bidder[i], price: price[i], dateTime: dateTime[i], value };
      };
    });
  },

  // q14: bids with 1,000,000 < 0.908 * price < 50,000,000: converted price, time-of-day type (UTC hour), count of 'c' in extra.
  q14: (ev) =>
    mapBids(ev, (cols) => {
      const auction = nums(cols, 'auction');
      const bidder = nums(cols, 'bidder');
      const price = nums(cols, 'price');
      const dateTime = nums(cols, 'dateTime');
      const { dict, codes } = cols.get('extra');
      return (i) => {
        const scaled = price[i] * 908; // 1000 * 0.908 * price, exact
        if (scaled <= 1e9 || scaled >= 5e10) return null;
        const t = dateTime[i];
        const hour = Math.floor(t / HOUR) % 24;
        const extra = dict[codes[i]];
        let cs = 0;
        for (let at = extra.indexOf('c'); at !== -1; at = extra.indexOf('c', at + 1)) cs++;
        return {
          auction: auction[i],
          bidder: bidder[i],
          price: scaled / 1000,
          bidTimeType: hour >= 8 && hour <= 18 ? 'dayTime' : hour <= 6 || hour >= 20 ? 'nightTime' : 'otherTime',
          dateTime: t,
          extra,
          c_counts: cs,
        };
      };
    }),

  // q15: per UTC day, bids per price band and distinct bidders and auctions, overall and per band.
  q15: (ev) => {
    const days = new Map(); // day number -> Bands
    let dayNo = NaN;
    let group = null;
    scan(ev, 'bid', (n, cols) => {
      const auction = nums(cols, 'auction');
      const bidder = nums(cols, 'bidder');
      const price = nums(cols, 'price');
      const dateTime = nums(cols, 'dateTime');
      for (let i = 0; i < n; i++) {
        const d = Math.floor(dateTime[i] / DAY);
        if (d !== dayNo) {
          dayNo = d;
          group = days.get(d);
          if (group === undefined) {
            group = new Bands();
            days.set(d, group);
          }
        }
        group.add(price[i], bidder[i], auction[i], dateTime[i]);
      }
    });
    return [...days].map(([d, g]) => g.into({ day: dayString(d) }));
  },

  // q16: per channel and UTC day, q15's counts and the latest 'HH:mm' of its bids.
  q16: (ev) => {
    const days = new Map(); // day number -> Map channel -> Bands
    let dayNo = NaN;
    let groups = null;
    let byCode = []; // channel code -> Bands, for day dayNo and dictionary codeDict
    let codeDict = null;
    scan(ev, 'bid', (n, cols) => {
      const auction = nums(cols, 'auction');
      const bidder = nums(cols, 'bidder');
      const price = nums(cols, 'price');
      const dateTime = nums(cols, 'dateTime');
      const { dict, codes } = cols.get('channel');
      if (dict !== codeDict) {
        codeDict = dict;
        byCode = new Array(dict.length);
      }
      for (let i = 0; i < n; i++) {
        const d = Math.floor(dateTime[i] / DAY);
        if (d !== dayNo) {
          dayNo = d;
          groups = days.get(d);
          if (groups === undefined) {
            groups = new Map();
            days.set(d, groups);
          }
          byCode = new Array(dict.length);
        }
        const code = codes[i];
        let g = byCode[code];
        if (g === undefined) {
          const channel = dict[code];
          g = groups.get(channel);
          if (g === undefined) {
            g = new Bands();
            groups.set(channel, g);
          }
          byCode[code] = g;
        }
        g.add(price[i], bidder[i], auction[i], dateTime[i]);
      }
    });
    const out = [];
    for (const [d, groups] of days) for (const [channel, g] of groups) out.push(g.into({ channel, day: dayString(d), minute: minuteString(g.maxTime) }));
    return out;
  },

  // q17: per auction and UTC day, bids per price band and min, max, average and sum of the price.
  q17: (ev) => {
    const days = new Map(); // day number -> Map auction -> row
    let dayNo = NaN;
    let groups = null;
    scan(ev, 'bid', (n, cols) => {
      const auction = nums(cols, 'auction');
      const price = nums(cols, 'price');
      const dateTime = nums(cols, 'dateTime');
      for (let i = 0; i < n; i++) {
        const d = Math.floor(dateTime[i] / DAY);
        if (d !== dayNo) {
          dayNo = d;
          groups = days.get(d);
          if (groups === undefined) {
            groups = new Map();
            days.set(d, groups);
          }
        }
        const a = auction[i];
        const p = price[i];
        let g = groups.get(a);
        if (g === undefined) {
          g = { auction: a, day: dayNo, total_bids: 0, rank1_bids: 0, rank2_bids: 0, rank3_bids: 0, min_price: p, max_price: p, avg_price: 0, sum_price: 0 };
          groups.set(a, g);
        }
        g.total_bids++;
        if (p < 10_000) g.rank1_bids++;
        else if (p < 1_000_000) g.rank2_bids++;
        else g.rank3_bids++;
        if (p < g.min_price) g.min_price = p;
        if (p > g.max_price) g.max_price = p;
        g.sum_price += p;
      }
    });
    const out = [];
    for (const [d, groups] of days) {
      const day = dayString(d);
      for (const g of groups.values()) {
        g.day = day;
        g.avg_price = g.sum_price / g.total_bids;
        out.push(g);
      }
    }
    return out;
  },

  // q18: per (bidder, auction), its latest bid (the greatest dateTime, then the greatest extra).
  q18: (ev) => {
    const byBidder = new Map(); // bidder -> Map auction -> row
    const out = [];
    scan(ev, 'bid', (n, cols) => {
      const auction = nums(cols, 'auction');
      const bidder = nums(cols, 'bidder');
      const price = nums(cols, 'price');
      const dateTime = nums(cols, 'dateTime');
      const channel = cols.get('channel');
      const url = cols.get('url');
      const extra = cols.get('extra');
      for (let i = 0; i < n; i++) {
        const b = bidder[i];
        let auctions = byBidder.get(b);
        if (auctions === undefined) {
          auctions = new Map();
          byBidder.set(b, auctions);
        }
        const t = dateTime[i];
        const row = auctions.get(auction[i]);
        if (row === undefined) {
          const r = {
            auction: auction[i],
            bidder: b,
            price: price[i],
            channel: channel.dict[channel.codes[i]],
            url: url.dict[url.codes[i]],
            dateTime: t,
            extra: extra.dict[extra.codes[i]],
          };
          auctions.set(auction[i], r);
          out.push(r);
        } else if (t > row.dateTime || (t === row.dateTime && extra.dict[extra.codes[i]] > row.extra)) {
          row.price = price[i];
          row.channel = channel.dict[channel.codes[i]];
          row.url = url.dict[url.codes[i]];
          row.dateTime = t;
          row.extra = extra.dict[extra.codes[i]];
        }
      }
    });
    return out;
  },

  // q19: per auction, its ten best bids by ranksBefore, ranked 1 to 10.
  q19: (ev) => {
    const tops = new Map(); // auction -> up to 10 rows, best first
    scan(ev, 'bid', (n, cols) => {
      const auction = nums(cols, 'auction');
      const bidder = nums(cols, 'bidder');
      const price = nums(cols, 'price');
      const dateTime = nums(cols, 'dateTime');
      const channel = cols.get('channel');
      const url = cols.get('url');
      const { dict, codes } = cols.get('extra');
      for (let i = 0; i < n; i++) {
        const a = auction[i];
        let top = tops.get(a);
        if (top === undefined) {
          top = [];
          tops.set(a, top);
        }
        const p = price[i];
        const t = dateTime[i];
        const b = bidder[i];
        const x = dict[codes[i]];
        let at = top.length;
        while (at > 0 && ranksBefore(p, t, b, x, top[at - 1])) at--;
        if (at >= 10) continue;
        const row = {
          auction: a,
          bidder: b,
          price: p,
          channel: channel.dict[channel.codes[i]],
          url: url.dict[url.codes[i]],
          dateTime: t,
          extra: x,
          rank_number: 0,
        };
        top.splice(at, 0, row);
        if (top.length > 10) top.pop();
      }
    });
    const out = [];
    for (const top of tops.values()) {
      for (let r = 0; r < top.length; r++) {
        top[r].rank_number = r + 1;
        out.push(top[r]);
      }
    }
    return out;
  },

  // q20: every bid on a category-10 auction, with the auction's columns.
  q20: (ev) => {
    const auctions = new Map(); // auction id -> its columns (category 10 only)
    scan(ev, 'auction', (n, cols) => {
      const id = nums(cols, 'id');
      const initialBid = nums(cols, 'initialBid');
      const reserve = nums(cols, 'reserve');
      const dateTime = nums(cols, 'dateTime');
      const expires = nums(cols, 'expires');
      const seller = nums(cols, 'seller');
      const category = nums(cols, 'category');
      const itemName = cols.get('itemName');
      const description = cols.get('description');
      const extra = cols.get('extra');
      for (let i = 0; i < n; i++) {
        if (category[i] !== 10) continue;
        auctions.set(id[i], {
          itemName: itemName.dict[itemName.codes[i]],
          description: description.dict[description.codes[i]],
          initialBid: initialBid[i],
          reserve: reserve[i],
          dateTime: dateTime[i],
          expires: expires[i],
          seller: seller[i],
          category: category[i],
          extra: extra.dict[extra.codes[i]],
        });
      }
    });
    return mapBids(ev, (cols) => {
      const auction = nums(cols, 'auction');
      const bidder = nums(cols, 'bidder');
      const price = nums(cols, 'price');
      const dateTime = nums(cols, 'dateTime');
      const channel = cols.get('channel');
      const url = cols.get('url');
      const extra = cols.get('extra');
      return (i) => {
        const a = auctions.get(auction[i]);
        if (a === undefined) return null;
        return {
          auction: auction[i],
          bidder: bidder[i],
          price: price[i],
          channel: channel.dict[channel.codes[i]],
          url: url.dict[url.codes[i]],
          bid_dateTime: dateTime[i],
          bid_extra: extra.dict[extra.codes[i]],
          itemName: a.itemName,
          description: a.description,
          initialBid: a.initialBid,
          reserve: a.reserve,
          auction_dateTime: a.dateTime,
          expires: a.expires,
          seller: a.seller,
          category: a.category,
          auction_extra: a.extra,
        };
      };
    });
  },

  // q21: bids with a channel id (a hot channel's number, else the url's channel_id parameter), those without one dropped.
  q21: (ev) => {
    const HOT = new Map([
      ['apple', '0'],
      ['google', '1'],
      ['facebook', '2'],
      ['baidu', '3'],
    ]);
    const CHANNEL_ID = /(?:&|^)channel_id=([^&]*)/;
    // Computed once per dictionary entry: a channel's hot id ('' if not hot), a url's channel_id ('' if none).
    let channelDict = null;
    let hotIds = [];
    let urlDict = null;
    let urlIds = [];
    return mapBids(ev, (cols) => {
      const auction = nums(cols, 'auction');
      const bidder = nums(cols, 'bidder');
      const price = nums(cols, 'price');
      const channel = cols.get('channel');
      const url = cols.get('url');
      if (channel.dict !== channelDict) {
        channelDict = channel.dict;
        hotIds = new Array(channelDict.length);
      }
      if (url.dict !== urlDict) {
        urlDict = url.dict;
        urlIds = new Array(urlDict.length);
      }
      return (i) => {
        const c = channel.codes[i];
        let id = hotIds[c];
        if (id === undefined) id = hotIds[c] = HOT.get(channelDict[c].toLowerCase()) ?? '';
        if (id === '') {
          const u = url.codes[i];
          id = urlIds[u];
          if (id === undefined) id = urlIds[u] = CHANNEL_ID.exec(urlDict[u])?.[1] ?? '';
          if (id === '') return null;
        }
        return { auction: auction[i], bidder: bidder[i], price: price[i], channel: channelDict[c], channel_id: id };
      };
    });
  },

  // q22: every bid with the url's 4th, 5th and 6th '/'-separated parts.
  q22: (ev) => {
    let urlDict = null;
    let dirs = []; // url code -> [dir1, dir2, dir3], once per dictionary entry
    return mapBids(ev, (cols) => {
      const auction = nums(cols, 'auction');
      const bidder = nums(cols, 'bidder');
      const price = nums(cols, 'price');
      const channel = cols.get('channel');
      const url = cols.get('url');
      if (url.dict !== urlDict) {
        urlDict = url.dict;
        dirs = new Array(urlDict.length);
      }
      return (i) => {
        const u = url.codes[i];
        let d = dirs[u];
        if (d === undefined) {
          const parts = urlDict[u].split('/');
          d = dirs[u] = [parts[3] ?? '', parts[4] ?? '', parts[5] ?? ''];
        }
        return { auction: auction[i], bidder: bidder[i], price: price[i], channel: channel.dict[channel.codes[i]], dir1: d[0], dir2: d[1], dir3: d[2] };
      };
    });
  },
};

/** The hand baseline of Nexmark query `id`. */
export function handLoop(id) {
  const loop = HAND[id];
  if (loop === undefined) throw new Error(`no hand baseline for Nexmark query ${id}; there are: ${Object.keys(HAND).join(', ')}`);
  return loop;
}
