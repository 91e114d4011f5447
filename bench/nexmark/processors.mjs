// The stateful processors of the Nexmark queries that Spark's streaming model has no operator for
// (Flink writes them with ROW_NUMBER over an update stream, or an aggregate of one). Each emits a
// key's new result whenever it changes, so the last row a key emitted is its result once the
// stream has ended. Imported by every worker.

const ms = (t) => (t instanceof Date ? t.getTime() : t);

/** q4: per category, the average of its auctions' final prices (the highest bid within each auction's time). */
export class CategoryAverage {
  init(handle) {
    this.best = handle.getMapState('best', 'LONG', 'LONG');
    this.total = handle.getValueState('total', 'sum LONG, count LONG');
  }
  *handleInputRows(key, rows) {
    let { sum, count } = this.total.get() ?? { sum: 0, count: 0 };
    const before = sum;
    const seen = count;
    for (const row of rows) {
      const old = this.best.getValue(row.id);
      if (old === null) {
        count++;
        sum += row.price;
        this.best.updateValue(row.id, row.price);
      } else if (row.price > old) {
        sum += row.price - old;
        this.best.updateValue(row.id, row.price);
      }
    }
    if (sum === before && count === seen) return;
    this.total.update({ sum, count });
    yield { category: key.category, final: sum / count };
  }
}

/** Whether bid a ranks before bid b: the higher price, then the earlier, then the lower bidder, then extra. */
function ranksBefore(a, b) {
  if (a.price !== b.price) return a.price > b.price;
  if (ms(a.dateTime) !== ms(b.dateTime)) return ms(a.dateTime) < ms(b.dateTime);
  if (a.bidder !== b.bidder) return a.bidder < b.bidder;
  return a.extra < b.extra;
}

const Q9_FIELDS =
  'id LONG, itemName STRING, description STRING, initialBid LONG, reserve LONG, dateTime TIMESTAMP, expires TIMESTAMP, seller LONG, category LONG, extra STRING, auction LONG, bidder LONG, price LONG, bid_dateTime TIMESTAMP, bid_extra STRING';

/** q9: each auction's winning bid (the first of its bids by ranksBefore, within the auction's time), with the auction. */
export class WinningBid {
  init(handle) {
    this.winner = handle.getValueState('winner', Q9_FIELDS);
  }
  *handleInputRows(_key, rows) {
    const had = this.winner.get();
    let best = had;
    for (const row of rows) {
      const bid = { price: row.price, dateTime: row.bid_dateTime, bidder: row.bidder, extra: row.bid_extra };
      if (best === null || ranksBefore(bid, { price: best.price, dateTime: best.bid_dateTime, bidder: best.bidder, extra: best.bid_extra })) best = row;
    }
    if (best === had) return;
    this.winner.update(best);
    yield best;
  }
}

const BID_FIELDS = 'auction LONG, bidder LONG, price LONG, channel STRING, url STRING, dateTime TIMESTAMP, extra STRING';

/** q18: each (bidder, auction)'s latest bid (the latest time; at one time, the greatest extra). */
export class LatestBid {
  init(handle) {
    this.latest = handle.getValueState('latest', BID_FIELDS);
  }
  *handleInputRows(_key, rows) {
    const had = this.latest.get();
    let best = had;
    for (const row of rows) {
      if (best === null || ms(row.dateTime) > ms(best.dateTime) || (ms(row.dateTime) === ms(best.dateTime) && row.extra > best.extra)) best = row;
    }
    if (best === had) return;
    this.latest.update(best);
    yield best;
  }
}

/** q19: each auction's ten best bids (by ranksBefore), as rows ranked 1 to 10; a change emits every rank from the first that moved. */
export class TopBids {
  init(handle) {
    this.top = handle.getListState('top', BID_FIELDS);
  }
  *handleInputRows(_key, rows) {
    const top = [...this.top.get()];
    let moved = top.length;
    for (const row of rows) {
      let at = top.length;
      while (at > 0 && ranksBefore(row, top[at - 1])) at--;
      if (at >= 10) continue;
      top.splice(at, 0, row);
      if (top.length > 10) top.pop();
      moved = Math.min(moved, at);
    }
    if (moved >= top.length) return;
    this.top.put(top);
    for (let i = moved; i < top.length; i++) yield { ...top[i], rank_number: i + 1 };
  }
}

/**
 * q6: per seller, for each of its auctions, the average winning price of that auction and the
 * seller's 10 auctions before it (by the winning bid's time, then auction id), as Flink's
 * AVG OVER (ROWS BETWEEN 10 PRECEDING AND CURRENT ROW) of the winning bids. A new winner emits
 * the averages it changed.
 */
export class SellerAverage {
  init(handle) {
    this.winners = handle.getMapState('winners', 'LONG', 'price LONG, dateTime LONG, bidder LONG, extra STRING');
    this.emitted = handle.getMapState('emitted', 'LONG', 'DOUBLE');
  }
  *handleInputRows(key, rows) {
    let changed = false;
    for (const row of rows) {
      const bid = { price: row.price, dateTime: ms(row.bid_dateTime), bidder: row.bidder, extra: row.bid_extra };
      const had = this.winners.getValue(row.id);
      if (had !== null && !ranksBefore(bid, had)) continue;
      this.winners.updateValue(row.id, bid);
      changed = true;
    }
    if (!changed) return;
    const all = [...this.winners.iterator()].sort(([a, x], [b, y]) => x.dateTime - y.dateTime || a - b);
    let sum = 0;
    for (let i = 0; i < all.length; i++) {
      sum += all[i][1].price;
      if (i > 10) sum -= all[i - 11][1].price;
      const avg = sum / Math.min(i + 1, 11);
      const id = all[i][0];
      if (this.emitted.getValue(id) === avg) continue;
      this.emitted.updateValue(id, avg);
      yield { seller: key.seller, id, avg_price: avg };
    }
  }
}
