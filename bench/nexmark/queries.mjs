// The Nexmark suite (the nexmark project's Flink SQL queries q0-q22), each written three ways:
//
//   dataframe(t, ctx)  Sluice's DataFrame API over the streams t.person, t.auction, t.bid (each
//                      watermarked dateTime - 4 seconds, as Flink's DDL) and t.side (q13's static table)
//   sql                the same through session.sql, over views person, auction, bid and side_input
//   duckdb             the query's final result in DuckDB's batch SQL over the same events, with
//                      timestamps as epoch milliseconds
//
// `mode` is the sink's output mode; `sink`, where given, the file sink the query writes (else
// memory for checks, noop for timing). An `update` query's result is the last row each `key` got once
// the stream has ended; an `append` query's is every row. `columns` is the output, in order.
// `check: 'invariants'` (q12, on processing time) is checked by checkInvariants instead of DuckDB.
// `afterSql`, where present, is applied to the SQL's frame: the processor (transformWithState) of a
// query that Spark's SQL has no operator for, named in `via`. `cannot` says why a query does not
// run (the README's Nexmark table quotes it).
import {
  col,
  count,
  count_if,
  expr,
  lit,
  max,
  min,
  avg,
  sum,
  size,
  collect_set,
  session_window,
  statefulProcessor,
  window,
  current_timestamp,
} from '@sluice/driver';

const processors = new URL('./processors.mjs', import.meta.url);
const processor = (name) => statefulProcessor(processors, name);

const BID_COLUMNS = ['auction', 'bidder', 'price', 'channel', 'url', 'dateTime', 'extra'];

/** Prices bands of q15-q17. */
const RANKS = ['price < 10000', 'price >= 10000 AND price < 1000000', 'price >= 1000000'];

/**
 * q15-q17's counts: bids per band; with `distinct`, the sets of bidders and auctions (a stream has
 * no distinct aggregate), which `setSizes` turns into counts.
 */
function bandCounts(withDistinct) {
  const aggs = [count('*').alias('total_bids'), ...RANKS.map((r, i) => count_if(expr(r)).alias(`rank${i + 1}_bids`))];
  if (!withDistinct) return aggs;
  for (const what of ['bidder', 'auction']) {
    aggs.push(collect_set(col(what)).alias(`total_${what}s`));
    RANKS.forEach((r, i) => {
      aggs.push(collect_set(expr(`CASE WHEN ${r} THEN ${what} END`)).alias(`rank${i + 1}_${what}s`));
    });
  }
  return aggs;
}

/** The columns of an aggregation by `keys` with bandCounts(true), the sets as their sizes. */
function setSizes(df, keys) {
  return df.select(...keys, ...bandColumns(true).map((c) => (c.endsWith('_bids') ? col(c) : size(col(c)).alias(c))));
}

function bandSql(withDistinct) {
  const items = ['count(*) AS total_bids', ...RANKS.map((r, i) => `count_if(${r}) AS rank${i + 1}_bids`)];
  if (withDistinct) {
    for (const what of ['bidder', 'auction']) {
      items.push(`size(collect_set(${what})) AS total_${what}s`);
      RANKS.forEach((r, i) => {
        items.push(`size(collect_set(CASE WHEN ${r} THEN ${what} END)) AS rank${i + 1}_${what}s`);
      });
    }
  }
  return items.join(',\n       ');
}

function bandDuck(withDistinct) {
  const items = ['count(*) AS total_bids', ...RANKS.map((r, i) => `count(*) FILTER (WHERE ${r}) AS rank${i + 1}_bids`)];
  if (withDistinct) {
    for (const what of ['bidder', 'auction']) {
      items.push(`count(DISTINCT ${what}) AS total_${what}s`);
      RANKS.forEach((r, i) => {
        items.push(`count(DISTINCT ${what}) FILTER (WHERE ${r}) AS rank${i + 1}_${what}s`);
      });
    }
  }
  return items.join(', ');
}

const bandColumns = (withDistinct) => [
  'total_bids',
  'rank1_bids',
  'rank2_bids',
  'rank3_bids',
  ...(withDistinct ? ['bidder', 'auction'].flatMap((w) => [`total_${w}s`, `rank1_${w}s`, `rank2_${w}s`, `rank3_${w}s`]) : []),
];

/** Auctions joined with the bids made while they were open (q4, q9): auction columns, then the bid's renamed. */
function auctionBids(t) {
  const bids = t.bid.select(col('auction'), col('bidder'), col('price'), col('dateTime').alias('bid_dateTime'), col('extra').alias('bid_extra'));
  return t.auction.join(bids, expr('id = auction AND bid_dateTime BETWEEN dateTime AND expires'), 'inner');
}

const AUCTION_BIDS_SQL = `SELECT A.*, B.auction, B.bidder, B.price, B.dateTime AS bid_dateTime, B.extra AS bid_extra
       FROM auction A JOIN bid B ON A.id = B.auction AND B.dateTime BETWEEN A.dateTime AND A.expires`;

const AUCTION_BIDS_DUCK = `SELECT A.*, B.auction, B.bidder, B.price, B.dateTime AS bid_dateTime, B.extra AS bid_extra
       FROM auction A JOIN bid B ON A.id = B.auction AND B.dateTime BETWEEN A.dateTime AND A.expires`;

// The queries that end in a processor: the relational part is SQL or DataFrame, the processor a DataFrame call.
const BID_SCHEMA = 'auction LONG, bidder LONG, price LONG, channel STRING, url STRING, dateTime TIMESTAMP, extra STRING';
const update = (outputSchema) => ({ outputSchema, outputMode: 'update' });
const averageByCategory = (joined) =>
  joined.select('id', 'category', 'price').groupBy('category').transformWithState(processor('CategoryAverage'), update('category LONG, final DOUBLE'));
const averageBySeller = (joined) =>
  joined
    .select('id', 'seller', 'price', 'bid_dateTime', 'bidder', 'bid_extra')
    .groupBy('seller')
    .transformWithState(processor('SellerAverage'), update('seller LONG, id LONG, avg_price DOUBLE'));
const winningBids = (joined) =>
  joined
    .groupBy('id')
    .transformWithState(
      processor('WinningBid'),
      update(
        'id LONG, itemName STRING, description STRING, initialBid LONG, reserve LONG, dateTime TIMESTAMP, expires TIMESTAMP, seller LONG, category LONG, extra STRING, auction LONG, bidder LONG, price LONG, bid_dateTime TIMESTAMP, bid_extra STRING',
      ),
    );
const latestBids = (bid) => bid.groupBy('bidder', 'auction').transformWithState(processor('LatestBid'), update(BID_SCHEMA));
const topBids = (bid) => bid.groupBy('auction').transformWithState(processor('TopBids'), update(`${BID_SCHEMA}, rank_number INT`));

const hop = (ts) => `window(${ts}, '10 seconds', '2 seconds')`;

export const QUERIES = [
  {
    id: 'q0',
    title: 'pass-through',
    kind: 'stateless',
    mode: 'append',
    columns: ['auction', 'bidder', 'price', 'dateTime', 'extra'],
    dataframe: (t) => t.bid.select('auction', 'bidder', 'price', 'dateTime', 'extra'),
    sql: 'SELECT auction, bidder, price, dateTime, extra FROM bid',
    duckdb: 'SELECT auction, bidder, price, epoch_ms(dateTime) AS dateTime, extra FROM bid',
  },
  {
    id: 'q1',
    title: 'currency conversion',
    kind: 'stateless',
    mode: 'append',
    columns: ['auction', 'bidder', 'price', 'dateTime', 'extra'],
    dataframe: (t) => t.bid.select(col('auction'), col('bidder'), lit(0.908).multiply(col('price')).alias('price'), col('dateTime'), col('extra')),
    sql: 'SELECT auction, bidder, 0.908 * price AS price, dateTime, extra FROM bid',
    duckdb: 'SELECT auction, bidder, CAST(0.908 * price AS DOUBLE) AS price, epoch_ms(dateTime) AS dateTime, extra FROM bid',
  },
  {
    id: 'q2',
    title: 'selection',
    kind: 'stateless',
    mode: 'append',
    columns: ['auction', 'price'],
    dataframe: (t) => t.bid.filter(expr('mod(auction, 123) = 0')).select('auction', 'price'),
    sql: 'SELECT auction, price FROM bid WHERE mod(auction, 123) = 0',
    duckdb: 'SELECT auction, price FROM bid WHERE auction % 123 = 0',
  },
  {
    id: 'q3',
    title: 'local item suggestion',
    kind: 'join',
    mode: 'append',
    columns: ['name', 'city', 'state', 'id'],
    dataframe: (t) =>
      t.auction
        .filter(col('category').equalTo(10))
        .select('id', 'seller')
        .join(
          t.person.filter(expr("state IN ('OR', 'ID', 'CA')")).select(col('id').alias('person_id'), 'name', 'city', 'state'),
          expr('seller = person_id'),
          'inner',
        )
        .select('name', 'city', 'state', 'id'),
    sql: `SELECT P.name, P.city, P.state, A.id
          FROM auction A JOIN person P ON A.seller = P.id
          WHERE A.category = 10 AND (P.state = 'OR' OR P.state = 'ID' OR P.state = 'CA')`,
    duckdb: `SELECT P.name, P.city, P.state, A.id FROM auction A JOIN person P ON A.seller = P.id
             WHERE A.category = 10 AND (P.state = 'OR' OR P.state = 'ID' OR P.state = 'CA')`,
  },
  {
    id: 'q4',
    title: 'average price for a category',
    kind: 'join',
    mode: 'append',
    key: ['category'],
    via: 'transformWithState (an average of per-auction maxima is an aggregation of an update stream)',
    columns: ['category', 'final'],
    dataframe: (t) => averageByCategory(auctionBids(t)),
    sql: AUCTION_BIDS_SQL,
    afterSql: averageByCategory,
    duckdb: `SELECT category, avg(final) AS final FROM (
               SELECT max(B.price) AS final, A.category FROM auction A, bid B
               WHERE A.id = B.auction AND B.dateTime BETWEEN A.dateTime AND A.expires
               GROUP BY A.id, A.category) Q
             GROUP BY category`,
  },
  {
    id: 'q5',
    title: 'hot items',
    kind: 'window',
    mode: 'append',
    columns: ['auction', 'num'],
    dataframe: (t, ctx) => {
      const counts = (bid) => bid.groupBy(col('auction'), window(col('dateTime'), '10 seconds', '2 seconds')).agg(count('*').alias('num'));
      const maxes = counts(ctx.another('bid')).groupBy(col('window').alias('max_window')).agg(max('num').alias('maxn'));
      return counts(t.bid).join(maxes, expr('window = max_window AND num >= maxn'), 'inner').select('auction', 'num');
    },
    sql: `SELECT AuctionBids.auction, AuctionBids.num
          FROM (SELECT auction, count(*) AS num, window FROM bid GROUP BY auction, ${hop('dateTime')}) AuctionBids
          JOIN (SELECT max(num) AS maxn, window FROM (SELECT auction, count(*) AS num, window FROM bid GROUP BY auction, ${hop('dateTime')}) CountBids
                GROUP BY window) MaxBids
          ON AuctionBids.window = MaxBids.window AND AuctionBids.num >= MaxBids.maxn`,
    duckdb: `WITH hb AS (
               SELECT auction, (epoch_ms(dateTime) // 2000) * 2000 - k * 2000 AS ws FROM bid, range(5) r(k)),
             counts AS (SELECT auction, ws, count(*) AS num FROM hb GROUP BY auction, ws),
             maxes AS (SELECT ws, max(num) AS maxn FROM counts GROUP BY ws)
             SELECT counts.auction, counts.num FROM counts JOIN maxes ON counts.ws = maxes.ws AND counts.num >= maxes.maxn`,
  },
  {
    id: 'q6',
    title: 'average selling price by seller',
    kind: 'join',
    mode: 'append',
    key: ['seller', 'id'],
    via: 'transformWithState (an average OVER the last rows of an update stream, the winning bids)',
    columns: ['seller', 'avg_price'],
    dataframe: (t) => averageBySeller(auctionBids(t)),
    sql: AUCTION_BIDS_SQL,
    afterSql: averageBySeller,
    duckdb: `WITH winners AS (
               SELECT id, seller, price, bid_dateTime FROM (
                 SELECT *, ROW_NUMBER() OVER (PARTITION BY id, seller ORDER BY price DESC, bid_dateTime ASC, bidder ASC, bid_extra ASC) AS rownum
                 FROM (${AUCTION_BIDS_DUCK}))
               WHERE rownum <= 1)
             SELECT seller, avg(price) OVER (PARTITION BY seller ORDER BY bid_dateTime, id ROWS BETWEEN 10 PRECEDING AND CURRENT ROW) AS avg_price FROM winners`,
  },
  {
    id: 'q7',
    title: 'highest bid',
    kind: 'window',
    mode: 'append',
    columns: ['auction', 'price', 'bidder', 'dateTime', 'extra'],
    dataframe: (t, ctx) => {
      const maxes = ctx
        .another('bid')
        .groupBy(window(col('dateTime'), '10 seconds'))
        .agg(max('price').alias('maxprice'))
        .select(col('maxprice'), col('window.end').alias('window_end'));
      return t.bid
        .join(maxes, expr('price = maxprice AND dateTime BETWEEN window_end - INTERVAL 10 SECONDS AND window_end'), 'inner')
        .select('auction', 'price', 'bidder', 'dateTime', 'extra');
    },
    sql: `SELECT B.auction, B.price, B.bidder, B.dateTime, B.extra
          FROM bid B JOIN (SELECT max(price) AS maxprice, window.end AS window_end FROM bid GROUP BY window(dateTime, '10 seconds')) B1
          ON B.price = B1.maxprice AND B.dateTime BETWEEN B1.window_end - INTERVAL 10 SECONDS AND B1.window_end`,
    duckdb: `SELECT B.auction, B.price, B.bidder, epoch_ms(B.dateTime) AS dateTime, B.extra
             FROM bid B JOIN (SELECT max(price) AS maxprice, (epoch_ms(dateTime) // 10000 + 1) * 10000 AS window_end FROM bid GROUP BY window_end) B1
             ON B.price = B1.maxprice AND epoch_ms(B.dateTime) BETWEEN B1.window_end - 10000 AND B1.window_end`,
  },
  {
    id: 'q8',
    title: 'monitor new users',
    kind: 'window',
    mode: 'append',
    columns: ['id', 'name', 'starttime'],
    dataframe: (t) => {
      const people = t.person
        .groupBy(col('id'), col('name'), window(col('dateTime'), '10 seconds'))
        .agg(count('*').alias('n'))
        .select('id', 'name', 'window');
      const sellers = t.auction
        .groupBy(col('seller'), window(col('dateTime'), '10 seconds').alias('seller_window'))
        .agg(count('*').alias('n'))
        .select('seller', 'seller_window');
      return people
        .join(sellers, expr('id = seller AND window = seller_window'), 'inner')
        .select(col('id'), col('name'), col('window.start').alias('starttime'));
    },
    sql: `SELECT P.id, P.name, P.window.start AS starttime
          FROM (SELECT id, name, window FROM person GROUP BY id, name, window(dateTime, '10 seconds')) P
          JOIN (SELECT seller, window FROM auction GROUP BY seller, window(dateTime, '10 seconds')) A
          ON P.id = A.seller AND P.window = A.window`,
    duckdb: `SELECT P.id, P.name, P.ws AS starttime
             FROM (SELECT id, name, (epoch_ms(dateTime) // 10000) * 10000 AS ws FROM person GROUP BY id, name, ws) P
             JOIN (SELECT seller, (epoch_ms(dateTime) // 10000) * 10000 AS ws FROM auction GROUP BY seller, ws) A
             ON P.id = A.seller AND P.ws = A.ws`,
  },
  {
    id: 'q9',
    title: 'winning bids',
    kind: 'join',
    mode: 'append',
    key: ['id'],
    via: 'transformWithState (the first row by ROW_NUMBER of an update stream)',
    columns: [
      'id',
      'itemName',
      'description',
      'initialBid',
      'reserve',
      'dateTime',
      'expires',
      'seller',
      'category',
      'extra',
      'auction',
      'bidder',
      'price',
      'bid_dateTime',
      'bid_extra',
    ],
    dataframe: (t) => winningBids(auctionBids(t)),
    sql: AUCTION_BIDS_SQL,
    afterSql: winningBids,
    duckdb: `SELECT id, itemName, description, initialBid, reserve, epoch_ms(dateTime) AS dateTime, epoch_ms(expires) AS expires, seller, category, extra,
                    auction, bidder, price, epoch_ms(bid_dateTime) AS bid_dateTime, bid_extra
             FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY price DESC, bid_dateTime ASC, bidder ASC, bid_extra ASC) AS rownum
                   FROM (${AUCTION_BIDS_DUCK}))
             WHERE rownum <= 1`,
  },
  {
    id: 'q10',
    title: 'log to file system',
    kind: 'stateless',
    mode: 'append',
    // CSV files under dt=<day>/hm=<HH:mm>/ directories; the result is read back from them.
    sink: { format: 'csv', partitionBy: ['dt', 'hm'], schema: 'auction LONG, bidder LONG, price LONG, dateTime TIMESTAMP, extra STRING, dt STRING, hm STRING' },
    columns: ['auction', 'bidder', 'price', 'dateTime', 'extra', 'dt', 'hm'],
    dataframe: (t) =>
      t.bid.select(
        col('auction'),
        col('bidder'),
        col('price'),
        col('dateTime'),
        col('extra'),
        expr("date_format(dateTime, 'yyyy-MM-dd')").alias('dt'),
        expr("date_format(dateTime, 'HH:mm')").alias('hm'),
      ),
    sql: "SELECT auction, bidder, price, dateTime, extra, date_format(dateTime, 'yyyy-MM-dd') AS dt, date_format(dateTime, 'HH:mm') AS hm FROM bid",
    duckdb:
      "SELECT auction, bidder, price, epoch_ms(dateTime) AS dateTime, extra, strftime(dateTime, '%Y-%m-%d') AS dt, strftime(dateTime, '%H:%M') AS hm FROM bid",
  },
  {
    id: 'q11',
    title: 'user sessions',
    kind: 'window',
    mode: 'append',
    columns: ['bidder', 'bid_count', 'starttime', 'endtime'],
    dataframe: (t) =>
      t.bid
        .groupBy(col('bidder'), session_window(col('dateTime'), '10 seconds'))
        .agg(count('*').alias('bid_count'))
        .select(col('bidder'), col('bid_count'), col('session_window.start').alias('starttime'), col('session_window.end').alias('endtime')),
    sql: `SELECT bidder, count(*) AS bid_count, session_window.start AS starttime, session_window.end AS endtime
          FROM bid GROUP BY bidder, session_window(dateTime, '10 seconds')`,
    duckdb: `WITH marked AS (
               SELECT bidder, epoch_ms(dateTime) AS t,
                      CASE WHEN epoch_ms(dateTime) - lag(epoch_ms(dateTime)) OVER (PARTITION BY bidder ORDER BY dateTime) < 10000 THEN 0 ELSE 1 END AS starts
               FROM bid),
             numbered AS (SELECT bidder, t, sum(starts) OVER (PARTITION BY bidder ORDER BY t) AS s FROM marked)
             SELECT bidder, count(*) AS bid_count, min(t) AS starttime, max(t) + 10000 AS endtime FROM numbered GROUP BY bidder, s`,
  },
  {
    id: 'q12',
    title: 'processing-time windows',
    kind: 'window',
    mode: 'update',
    key: ['bidder', 'starttime'],
    check: 'invariants',
    columns: ['bidder', 'bid_count', 'starttime', 'endtime'],
    dataframe: (t) =>
      t.bid
        .groupBy(col('bidder'), window(current_timestamp(), '10 seconds'))
        .agg(count('*').alias('bid_count'))
        .select(col('bidder'), col('bid_count'), col('window.start').alias('starttime'), col('window.end').alias('endtime')),
    sql: `SELECT bidder, count(*) AS bid_count, window.start AS starttime, window.end AS endtime
          FROM bid GROUP BY bidder, window(current_timestamp(), '10 seconds')`,
    // Per bidder, the counts of its windows add up to its bids.
    duckdb: 'SELECT bidder, count(*) AS bid_count FROM bid GROUP BY bidder',
  },
  {
    id: 'q13',
    title: 'bounded side input join',
    kind: 'join',
    mode: 'append',
    columns: ['auction', 'bidder', 'price', 'dateTime', 'value'],
    dataframe: (t) => t.bid.join(t.side, expr('mod(auction, 10000) = key'), 'inner').select('auction', 'bidder', 'price', 'dateTime', 'value'),
    sql: 'SELECT B.auction, B.bidder, B.price, B.dateTime, S.value FROM bid B JOIN side_input S ON mod(B.auction, 10000) = S.key',
    duckdb: 'SELECT B.auction, B.bidder, B.price, epoch_ms(B.dateTime) AS dateTime, S.value FROM bid B JOIN side_input S ON B.auction % 10000 = S.key',
  },
  {
    id: 'q14',
    title: 'calculation',
    kind: 'stateless',
    mode: 'append',
    columns: ['auction', 'bidder', 'price', 'bidTimeType', 'dateTime', 'extra', 'c_counts'],
    dataframe: (t) =>
      t.bid.filter(expr('0.908 * price > 1000000 AND 0.908 * price < 50000000')).select(
        col('auction'),
        col('bidder'),
        expr('0.908 * price').alias('price'),
        expr(`CASE WHEN hour(dateTime) >= 8 AND hour(dateTime) <= 18 THEN 'dayTime'
                     WHEN hour(dateTime) <= 6 OR hour(dateTime) >= 20 THEN 'nightTime'
                     ELSE 'otherTime' END`).alias('bidTimeType'),
        col('dateTime'),
        col('extra'),
        expr("length(extra) - length(replace(extra, 'c', ''))").alias('c_counts'),
      ),
    sql: `SELECT auction, bidder, 0.908 * price AS price,
                 CASE WHEN hour(dateTime) >= 8 AND hour(dateTime) <= 18 THEN 'dayTime'
                      WHEN hour(dateTime) <= 6 OR hour(dateTime) >= 20 THEN 'nightTime'
                      ELSE 'otherTime' END AS bidTimeType,
                 dateTime, extra, length(extra) - length(replace(extra, 'c', '')) AS c_counts
          FROM bid WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000`,
    duckdb: `SELECT auction, bidder, CAST(0.908 * price AS DOUBLE) AS price,
                    CASE WHEN hour(dateTime) >= 8 AND hour(dateTime) <= 18 THEN 'dayTime'
                         WHEN hour(dateTime) <= 6 OR hour(dateTime) >= 20 THEN 'nightTime'
                         ELSE 'otherTime' END AS bidTimeType,
                    epoch_ms(dateTime) AS dateTime, extra, length(extra) - length(replace(extra, 'c', '')) AS c_counts
             FROM bid WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000`,
  },
  {
    id: 'q15',
    title: 'bidding statistics report',
    kind: 'window',
    mode: 'update',
    key: ['day'],
    columns: ['day', ...bandColumns(true)],
    dataframe: (t) => setSizes(t.bid.groupBy(expr("date_format(dateTime, 'yyyy-MM-dd')").alias('day')).agg(...bandCounts(true)), ['day']),
    sql: `SELECT date_format(dateTime, 'yyyy-MM-dd') AS day,\n       ${bandSql(true)}\n FROM bid GROUP BY date_format(dateTime, 'yyyy-MM-dd')`,
    duckdb: `SELECT strftime(dateTime, '%Y-%m-%d') AS day, ${bandDuck(true)} FROM bid GROUP BY day`,
  },
  {
    id: 'q16',
    title: 'channel statistics report',
    kind: 'window',
    mode: 'update',
    key: ['channel', 'day'],
    columns: ['channel', 'day', 'minute', ...bandColumns(true)],
    dataframe: (t) =>
      setSizes(
        t.bid
          .groupBy(col('channel'), expr("date_format(dateTime, 'yyyy-MM-dd')").alias('day'))
          .agg(max(expr("date_format(dateTime, 'HH:mm')")).alias('minute'), ...bandCounts(true)),
        ['channel', 'day', 'minute'],
      ),
    sql: `SELECT channel, date_format(dateTime, 'yyyy-MM-dd') AS day, max(date_format(dateTime, 'HH:mm')) AS minute,\n       ${bandSql(true)}\n FROM bid GROUP BY channel, date_format(dateTime, 'yyyy-MM-dd')`,
    duckdb: `SELECT channel, strftime(dateTime, '%Y-%m-%d') AS day, max(strftime(dateTime, '%H:%M')) AS minute, ${bandDuck(true)} FROM bid GROUP BY channel, day`,
  },
  {
    id: 'q17',
    title: 'auction statistics report',
    kind: 'window',
    mode: 'update',
    key: ['auction', 'day'],
    columns: ['auction', 'day', ...bandColumns(false), 'min_price', 'max_price', 'avg_price', 'sum_price'],
    dataframe: (t) =>
      t.bid
        .groupBy(col('auction'), expr("date_format(dateTime, 'yyyy-MM-dd')").alias('day'))
        .agg(
          ...bandCounts(false),
          min('price').alias('min_price'),
          max('price').alias('max_price'),
          avg('price').alias('avg_price'),
          sum('price').alias('sum_price'),
        ),
    sql: `SELECT auction, date_format(dateTime, 'yyyy-MM-dd') AS day,\n       ${bandSql(false)},
                 min(price) AS min_price, max(price) AS max_price, avg(price) AS avg_price, sum(price) AS sum_price
          FROM bid GROUP BY auction, date_format(dateTime, 'yyyy-MM-dd')`,
    duckdb: `SELECT auction, strftime(dateTime, '%Y-%m-%d') AS day, ${bandDuck(false)},
                    min(price) AS min_price, max(price) AS max_price, avg(price) AS avg_price, sum(price) AS sum_price
             FROM bid GROUP BY auction, day`,
  },
  {
    id: 'q18',
    title: 'find last bid',
    kind: 'state',
    mode: 'update',
    key: ['bidder', 'auction'],
    via: 'transformWithState (the latest row per key by ROW_NUMBER; dropDuplicates keeps the first)',
    columns: BID_COLUMNS,
    dataframe: (t) => latestBids(t.bid),
    sql: 'SELECT * FROM bid',
    afterSql: latestBids,
    duckdb: `SELECT auction, bidder, price, channel, url, epoch_ms(dateTime) AS dateTime, extra
             FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY dateTime DESC, extra DESC) AS rank_number FROM bid)
             WHERE rank_number <= 1`,
  },
  {
    id: 'q19',
    title: 'auction TOP-10 price',
    kind: 'state',
    mode: 'update',
    key: ['auction', 'rank_number'],
    via: 'transformWithState (a top-N per key)',
    columns: [...BID_COLUMNS, 'rank_number'],
    dataframe: (t) => topBids(t.bid),
    sql: 'SELECT * FROM bid',
    afterSql: topBids,
    duckdb: `SELECT auction, bidder, price, channel, url, epoch_ms(dateTime) AS dateTime, extra, rank_number
             FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC, dateTime ASC, bidder ASC, extra ASC) AS rank_number FROM bid)
             WHERE rank_number <= 10`,
  },
  {
    id: 'q20',
    title: 'expand bid with auction',
    kind: 'join',
    mode: 'append',
    columns: [
      'auction',
      'bidder',
      'price',
      'channel',
      'url',
      'bid_dateTime',
      'bid_extra',
      'itemName',
      'description',
      'initialBid',
      'reserve',
      'auction_dateTime',
      'expires',
      'seller',
      'category',
      'auction_extra',
    ],
    dataframe: (t) =>
      t.bid
        .select('auction', 'bidder', 'price', 'channel', 'url', col('dateTime').alias('bid_dateTime'), col('extra').alias('bid_extra'))
        .join(
          t.auction
            .filter(col('category').equalTo(10))
            .select(
              'id',
              'itemName',
              'description',
              'initialBid',
              'reserve',
              col('dateTime').alias('auction_dateTime'),
              'expires',
              'seller',
              'category',
              col('extra').alias('auction_extra'),
            ),
          expr('auction = id'),
          'inner',
        )
        .drop('id'),
    sql: `SELECT auction, bidder, price, channel, url, B.dateTime AS bid_dateTime, B.extra AS bid_extra,
                 itemName, description, initialBid, reserve, A.dateTime AS auction_dateTime, expires, seller, category, A.extra AS auction_extra
          FROM bid B JOIN auction A ON B.auction = A.id WHERE A.category = 10`,
    duckdb: `SELECT auction, bidder, price, channel, url, epoch_ms(B.dateTime) AS bid_dateTime, B.extra AS bid_extra,
                    itemName, description, initialBid, reserve, epoch_ms(A.dateTime) AS auction_dateTime, epoch_ms(expires) AS expires, seller, category, A.extra AS auction_extra
             FROM bid B JOIN auction A ON B.auction = A.id WHERE A.category = 10`,
  },
  {
    id: 'q21',
    title: 'add channel id',
    kind: 'stateless',
    mode: 'append',
    columns: ['auction', 'bidder', 'price', 'channel', 'channel_id'],
    dataframe: (t) =>
      t.bid.filter(expr("regexp_extract(url, '(&|^)channel_id=([^&]*)', 2) <> '' OR lower(channel) IN ('apple', 'google', 'facebook', 'baidu')")).select(
        col('auction'),
        col('bidder'),
        col('price'),
        col('channel'),
        expr(`CASE WHEN lower(channel) = 'apple' THEN '0' WHEN lower(channel) = 'google' THEN '1'
                     WHEN lower(channel) = 'facebook' THEN '2' WHEN lower(channel) = 'baidu' THEN '3'
                     ELSE regexp_extract(url, '(&|^)channel_id=([^&]*)', 2) END`).alias('channel_id'),
      ),
    sql: `SELECT auction, bidder, price, channel,
                 CASE WHEN lower(channel) = 'apple' THEN '0' WHEN lower(channel) = 'google' THEN '1'
                      WHEN lower(channel) = 'facebook' THEN '2' WHEN lower(channel) = 'baidu' THEN '3'
                      ELSE regexp_extract(url, '(&|^)channel_id=([^&]*)', 2) END AS channel_id
          FROM bid
          WHERE regexp_extract(url, '(&|^)channel_id=([^&]*)', 2) <> '' OR lower(channel) IN ('apple', 'google', 'facebook', 'baidu')`,
    duckdb: `SELECT auction, bidder, price, channel,
                    CASE WHEN lower(channel) = 'apple' THEN '0' WHEN lower(channel) = 'google' THEN '1'
                         WHEN lower(channel) = 'facebook' THEN '2' WHEN lower(channel) = 'baidu' THEN '3'
                         ELSE regexp_extract(url, '(&|^)channel_id=([^&]*)', 2) END AS channel_id
             FROM bid
             WHERE regexp_extract(url, '(&|^)channel_id=([^&]*)', 2) <> '' OR lower(channel) IN ('apple', 'google', 'facebook', 'baidu')`,
  },
  {
    id: 'q22',
    title: 'get URL directories',
    kind: 'stateless',
    mode: 'append',
    columns: ['auction', 'bidder', 'price', 'channel', 'dir1', 'dir2', 'dir3'],
    dataframe: (t) =>
      t.bid.select(
        col('auction'),
        col('bidder'),
        col('price'),
        col('channel'),
        expr("split_part(url, '/', 4)").alias('dir1'),
        expr("split_part(url, '/', 5)").alias('dir2'),
        expr("split_part(url, '/', 6)").alias('dir3'),
      ),
    sql: "SELECT auction, bidder, price, channel, split_part(url, '/', 4) AS dir1, split_part(url, '/', 5) AS dir2, split_part(url, '/', 6) AS dir3 FROM bid",
    duckdb:
      "SELECT auction, bidder, price, channel, split_part(url, '/', 4) AS dir1, split_part(url, '/', 5) AS dir2, split_part(url, '/', 6) AS dir3 FROM bid",
  },
];

export const QUERY_IDS = QUERIES.map((q) => q.id);

export function queryById(id) {
  const q = QUERIES.find((x) => x.id === id);
  if (!q) throw new Error(`unknown Nexmark query ${id}; known: ${QUERY_IDS.join(', ')}`);
  return q;
}
