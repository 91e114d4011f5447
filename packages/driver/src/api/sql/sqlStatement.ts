/**
 * `session.sql(text)`: a SELECT over temporary views, planned into the DataFrame operators a user
 * would call, so a streaming view gives a streaming DataFrame that writeStream can start.
 *
 *   query    := select (UNION ALL select)*
 *   select   := SELECT item, ... [FROM relation join* lateral*] [WHERE cond] [GROUP BY expr, ...] [HAVING cond]
 *   relation := view [[AS] alias] | ( query ) [[AS] alias] | VALUES (expr, ...), ... [[AS] alias[(name, ...)]]
 * A SELECT without FROM reads one row with no columns (SELECT upper('a')), as Spark's does.
 *   join     := [INNER | LEFT [OUTER] | [LEFT] SEMI | [LEFT] ANTI] JOIN relation (ON cond | USING (col, ...))
 *   lateral  := LATERAL VIEW [OUTER] generator(expr) [alias] AS name, ...
 *   item     := * | alias.* | expression [[AS] name] | generator(expr) [AS (name, ...)]
 *
 * A SELECT with GROUP BY, or with an aggregate among its items, is groupBy(keys).agg(...) over
 * every aggregate its items and HAVING use (each once), then HAVING as a filter and the items as
 * a projection: so `count(*) + 1 AS n` and `HAVING count(*) > 1` work as in Spark. A view's name
 * or alias qualifies its columns (`t.id`).
 */
import { expandStar, exprName, exprType, GENERATORS, syntaxError, type Expr, type GeneratorName, type Schema } from '@sluice/executor';
import { SluiceError } from '@sluice/state';
import { count, type AggregateColumn } from '../aggregates.js';
import { Column } from '../Column.js';
import type { DataFrame } from '../DataFrame.js';
import { columnOf, Parser, type Parsed } from './parseExpression.js';
import { freeColumns, keyRefs, resolves, rewrite } from './sqlRewrites.js';

/** What a statement reads: the views by name (case-insensitive, as Spark's temporary views), and a static frame of one empty row. */
export interface SqlContext {
  view(name: string): DataFrame | undefined;
  /** A static DataFrame of one row with no columns: SELECT without FROM, and VALUES, select from it. */
  oneRow(): DataFrame;
}

const JOIN_WORDS = ['join', 'inner', 'left', 'semi', 'anti', 'right', 'full', 'cross'];

/** The names that qualify columns (a view's name or alias, a subquery's alias), each with its relation's columns. */
type Qualifiers = Map<string, readonly string[]>;

interface Item {
  /**
   * `*`: every column of the FROM frame; `t.*` (qualifier ['t']): relation t's, else the fields
   * of struct column t; `t.s.*`: the fields of struct s of relation t (or of the nested struct t.s).
   */
  star?: true;
  qualifier?: string[];
  parsed?: Parsed;
  /** The item's output name: its alias, else Spark's name for it. */
  name?: string;
}

class StatementParser {
  private readonly p: Parser;
  /** Qualified names (`u.id`, lower case) of right-side columns an ON join renamed, to their new names. */
  private readonly renamed = new Map<string, string>();
  /** Aggregates the current SELECT uses, each once, with the column the aggregation gives it. */
  private aggregates: Array<{ agg: AggregateColumn; column: string }> = [];

  constructor(
    private readonly sql: string,
    private readonly ctx: SqlContext,
  ) {
    this.p = new Parser(sql);
    this.p.onAggregate = (agg) => {
      const keyOf = (x: AggregateColumn): string => JSON.stringify({ fn: x.fn, arg: x.arg, options: x.options });
      const key = keyOf(agg);
      let found = this.aggregates.find((a) => keyOf(a.agg) === key);
      if (found === undefined) {
        found = { agg, column: `__agg${this.aggregates.length}` };
        this.aggregates.push(found);
      }
      return { op: 'col', name: found.column };
    };
  }

  query(): DataFrame {
    const df = this.unionOfSelects();
    this.p.expectEnd();
    return df;
  }

  private unionOfSelects(): DataFrame {
    let df = this.select();
    while (this.p.acceptWord('union')) {
      if (!this.p.acceptWord('all'))
        throw new SluiceError('UNSUPPORTED_OPERATION', `UNION without ALL removes duplicates, which a stream cannot do: write UNION ALL (in '${this.sql}')`);
      df = df.union(this.select());
    }
    for (const clause of ['order', 'sort']) {
      if (this.p.isWord(clause)) {
        throw new SluiceError(
          'UNSUPPORTED_OPERATION',
          `${clause.toUpperCase()} is not supported in session.sql: a stream has no order (Spark sorts only a complete-mode aggregation); sort the sink's rows (in '${this.sql}')`,
        );
      }
    }
    // LIMIT n is DataFrame.limit(n): the first n rows of the stream.
    if (this.p.acceptWord('limit')) {
      const parsed = this.p.expression();
      const n = parsed.kind === 'column' && parsed.expr.op === 'lit' ? parsed.expr.value : undefined;
      if (typeof n !== 'number') {
        throw new SluiceError('INVALID_OPTION', `LIMIT takes a non-negative integer number of rows (in '${this.sql}')`, { option: 'n' });
      }
      return df.limit(n);
    }
    return df;
  }

  private select(): DataFrame {
    this.p.expectWord('select');
    const distinct = this.p.acceptWord('distinct');
    if (!distinct) this.p.acceptWord('all');
    const df = this.selectBody();
    // SELECT DISTINCT keeps the first row of each set of values: Spark plans it as a deduplication.
    return distinct ? df.dropDuplicates() : df;
  }

  private selectBody(): DataFrame {
    this.aggregates = [];
    const items: Item[] = [];
    do items.push(this.item());
    while (this.p.acceptOp(','));
    const qualifiers: Qualifiers = new Map();
    // SELECT without FROM reads one row with no columns, as Spark's does.
    let df = this.p.acceptWord('from') ? this.relation(qualifiers) : this.ctx.oneRow();
    for (;;) {
      const how = this.joinType();
      if (how === undefined) break;
      const before = new Set(qualifiers.keys());
      let other = this.relation(qualifiers);
      if (this.p.acceptWord('using')) {
        this.p.expectOp('(');
        const cols = [this.p.aliasName()];
        while (this.p.acceptOp(',')) cols.push(this.p.aliasName());
        this.p.expectOp(')');
        df = df.join(other, cols, how);
      } else {
        this.p.expectWord('on');
        other = this.renameShared(
          df,
          other,
          [...qualifiers.keys()].filter((q) => !before.has(q)),
          qualifiers,
        );
        df = df.join(other, new Column(this.unqualified(this.condition('ON'), qualifiers)), how);
      }
    }
    while (this.p.acceptWord('lateral')) df = this.lateralView(df, qualifiers);
    const unqualify = (e: Expr): Expr => this.unqualified(e, qualifiers);
    if (this.p.acceptWord('where')) df = df.filter(new Column(unqualify(this.condition('WHERE'))));
    const keys: Expr[] = [];
    if (this.p.acceptWord('group')) {
      this.p.expectWord('by');
      do keys.push(unqualify(this.condition('GROUP BY')));
      while (this.p.acceptOp(','));
    }
    const having = this.p.acceptWord('having') ? unqualify(this.condition('HAVING', true)) : undefined;
    // Items: resolved now that every aggregate they and HAVING use is known.
    const exprs = items.map((it) => (it.parsed === undefined ? undefined : columnOf(this.p, it.parsed)));
    const grouped = keys.length > 0 || this.aggregates.length > 0;
    if (!grouped) {
      if (having !== undefined) throw new SluiceError('UNSUPPORTED_OPERATION', `HAVING needs GROUP BY or an aggregate (in '${this.sql}')`);
      return df.select(...items.flatMap((it, i) => (it.star ? this.star(df, qualifiers, it.qualifier) : [new Column(this.named(unqualify(exprs[i]!), it))])));
    }
    // GROUP BY without an aggregate (the distinct keys) still aggregates, on a count no item reads.
    const aggs = this.aggregates.length > 0 ? this.aggregates.map((a) => a.agg.alias(a.column)) : [count('*').alias('__group_rows')];
    const aggregated = df.groupBy(...keys.map((k) => new Column(k))).agg(...aggs);
    const keyCols = keys.map((k) => ({ expr: k, name: exprName(k, df.schema) }));
    const grouping = aggregated.schema.filter((f) => keyCols.some((k) => k.name === f.name));
    const havingExpr = having === undefined ? undefined : keyRefs(having, keyCols);
    if (havingExpr !== undefined) this.checkGrouped(havingExpr, df, grouping, keys.length > 0);
    const projection = items.map((it, i) => {
      if (it.star) throw new SluiceError('UNSUPPORTED_OPERATION', `* in a SELECT with GROUP BY: name the keys and aggregates (in '${this.sql}')`);
      const e = keyRefs(unqualify(exprs[i]!), keyCols);
      this.checkGrouped(e, df, grouping, keys.length > 0);
      return new Column(this.named(e, it));
    });
    return this.withoutInternalNames(() => {
      const out = havingExpr === undefined ? aggregated : aggregated.filter(new Column(havingExpr));
      return out.select(...projection);
    });
  }

  /**
   * Spark's check of an aggregating SELECT: every column an item or HAVING reads outside an
   * aggregate must be a grouping key (or a field of one). Otherwise MISSING_AGGREGATION, or
   * MISSING_GROUP_BY when there is no GROUP BY; a column the input does not have at all is
   * UNRESOLVED_COLUMN against the input's columns.
   */
  private checkGrouped(e: Expr, input: DataFrame, grouping: Schema, hasGroupBy: boolean): void {
    const internal = new Set(['__group_rows', ...this.aggregates.map((a) => a.column)]);
    for (const name of freeColumns(e)) {
      if (internal.has(name) || resolves(name, grouping)) continue;
      exprType({ op: 'col', name }, input.schema);
      if (!hasGroupBy) {
        throw new SluiceError(
          'MISSING_GROUP_BY',
          `[MISSING_GROUP_BY] The query does not include a GROUP BY clause. Add GROUP BY or turn it into the window functions using OVER clauses. (in '${this.sql}')`,
          { column: name },
        );
      }
      throw new SluiceError(
        'MISSING_AGGREGATION',
        `[MISSING_AGGREGATION] The non-aggregating expression "${name}" is based on columns which are not participating in the GROUP BY clause. ` +
          `Add the columns or the expression to the GROUP BY, aggregate the expression, or use "any_value(${name})" if you do not care which of the values within a group is returned. (in '${this.sql}')`,
        { column: name },
      );
    }
  }

  /**
   * Runs `plan` (operators over the aggregation's output), putting the aggregates' own names
   * (count(1), sum(v)) in any error it throws in place of the internal columns that hold them.
   */
  private withoutInternalNames(plan: () => DataFrame): DataFrame {
    try {
      return plan();
    } catch (e) {
      if (!(e instanceof SluiceError)) throw e;
      const shown = (text: string): string =>
        text.replace(/__agg(\d+)/g, (m, i: string) => this.aggregates[Number(i)]?.agg.unaliasedName ?? m).replace(/__group_rows/g, 'count(1)');
      const { code, message, file, option, column, line, suggestions } = e;
      throw new SluiceError(code, shown(message), {
        ...(file !== undefined && { file }),
        ...(option !== undefined && { option }),
        ...(line !== undefined && { line }),
        ...(column !== undefined && { column: shown(column) }),
        ...(suggestions !== undefined && { suggestions: suggestions.filter((x) => !/^__agg\d+$|^__group_rows$/.test(x)) }),
        cause: e,
      });
    }
  }

  /** `expr AS name` when the item has a name other than the expression's own (aggregates named as written). */
  private named(e: Expr, it: Item): Expr {
    // A generator's columns are named by the generator or by its `AS (...)` list.
    const inner = e.op === 'alias' ? e.expr : e;
    if (inner.op === 'call' && GENERATORS.includes(inner.fn as GeneratorName)) return e;
    const written = rewrite(e, (node) => {
      const a = node.op === 'col' ? this.aggregates.find((x) => x.column === node.name) : undefined;
      return a && { op: 'col', name: a.agg.unaliasedName };
    });
    const name = it.name ?? exprName(written);
    return e.op === 'col' && e.name === name ? e : { op: 'alias', expr: e.op === 'alias' ? e.expr : e, name };
  }

  private item(): Item {
    if (this.p.acceptOp('*')) return { star: true };
    // name(.name)*.* : a relation's columns or a struct's fields.
    let ahead = 0;
    while (this.p.peek(ahead).kind === 'name' && this.p.isOp('.', this.p.peek(ahead + 1))) {
      if (this.p.isOp('*', this.p.peek(ahead + 2))) {
        const qualifier: string[] = [];
        for (let i = 0; i <= ahead; i += 2) {
          qualifier.push(this.p.aliasName());
          this.p.expectOp('.');
        }
        this.p.expectOp('*');
        return { star: true, qualifier };
      }
      ahead += 2;
    }
    const parsed = this.p.namedExpression(true);
    // The output name: an alias as written; an aggregate by its own name (count(1)); else Spark's.
    if (parsed.kind === 'aggregate') return { parsed, name: parsed.agg.name };
    const e = parsed.expr;
    return { parsed, name: e.op === 'alias' ? e.name : (parsed.name ?? undefined) };
  }

  /**
   * `*`: the frame's columns; `t.*`: those of relation t that the frame has (a USING key once);
   * else, as in Spark, `s.*` and `t.s.*` are the fields of a struct column, each named by its field.
   */
  private star(df: DataFrame, qualifiers: Qualifiers, qualifier?: string[]): Column[] {
    if (qualifier === undefined) return df.columns.map((c) => new Column({ op: 'col', name: c }));
    const own = qualifier.length === 1 ? qualifiers.get(qualifier[0]!.toLowerCase()) : undefined;
    if (own !== undefined) return own.filter((c) => df.columns.includes(c)).map((c) => new Column({ op: 'col', name: c }));
    const target = this.unqualified({ op: 'col', name: qualifier.join('.') }, qualifiers) as { name: string };
    try {
      return expandStar(target.name, df.schema).map((e) => new Column(e));
    } catch (e) {
      if (e instanceof SluiceError)
        throw new SluiceError(e.code, `${e.message} (in '${this.sql}')`, {
          ...(e.column !== undefined && { column: e.column }),
          ...(e.suggestions && { suggestions: e.suggestions }),
        });
      throw e;
    }
  }

  /** A condition or key: an aggregate only where `aggregates` (HAVING), as in Spark. */
  private condition(clause: string, aggregates = false): Expr {
    const at = this.aggregates.length;
    const parsed = this.p.expression();
    const e = columnOf(this.p, parsed) as Expr;
    if (!aggregates && this.aggregates.length > at) {
      throw new SluiceError(
        'INVALID_EXPRESSION',
        `aggregate ${this.aggregates[at]!.agg.name} in ${clause}: aggregates belong in the SELECT list or HAVING (in '${this.sql}')`,
      );
    }
    return e;
  }

  /** LATERAL VIEW [OUTER] generator(args) [alias] AS name, ...: the frame's columns and the generator's, as select('*', generator). */
  private lateralView(df: DataFrame, qualifiers: Qualifiers): DataFrame {
    this.p.expectWord('view');
    const outer = this.p.acceptWord('outer');
    const call = columnOf(this.p, this.p.expression()) as Expr;
    if (call.op !== 'call' || !GENERATORS.includes(call.fn as GeneratorName)) {
      throw new SluiceError('UNSUPPORTED_OPERATION', `LATERAL VIEW needs a generator such as explode(...), not ${exprName(call)} (in '${this.sql}')`);
    }
    const fn = (outer && !call.fn.endsWith('_outer') ? `${call.fn}_outer` : call.fn) as GeneratorName;
    const alias = this.p.isWord('as') ? undefined : this.p.aliasName();
    const names: string[] = [];
    if (this.p.acceptWord('as')) {
      do names.push(this.p.aliasName());
      while (this.p.acceptOp(','));
    }
    const generator = new Column({ op: 'call', fn, args: call.args.map((a) => this.unqualified(a, qualifiers)) });
    const out = df.select('*', names.length > 0 ? generator.alias(...names) : generator);
    if (alias !== undefined)
      qualifiers.set(
        alias.toLowerCase(),
        out.columns.filter((c) => !df.columns.includes(c)),
      );
    return out;
  }

  /** An inline table: VALUES (1, 'a'), (2, 'b') [[AS] tab(c1, c2)]; its columns are col1, col2, ... unless named. */
  private inlineTable(qualifiers: Qualifiers): DataFrame {
    const rows: Expr[][] = [];
    do {
      if (this.p.acceptOp('(')) {
        const row = [columnOf(this.p, this.p.expression()) as Expr];
        while (this.p.acceptOp(',')) row.push(columnOf(this.p, this.p.expression()) as Expr);
        this.p.expectOp(')');
        rows.push(row);
      } else rows.push([columnOf(this.p, this.p.expression()) as Expr]);
    } while (this.p.acceptOp(','));
    const width = rows[0]!.length;
    if (rows.some((r) => r.length !== width)) {
      throw new SluiceError(
        'INVALID_EXPRESSION',
        `[INVALID_INLINE_TABLE.NUM_COLUMNS_MISMATCH] the rows of VALUES must all have ${width} values (in '${this.sql}')`,
      );
    }
    let names = Array.from({ length: width }, (_, i) => `col${i + 1}`);
    let alias: string | undefined;
    if (this.p.acceptWord('as') || (this.p.t.kind === 'name' && !this.followsRelation(this.p.t.text))) {
      alias = this.p.aliasName().toLowerCase();
      if (this.p.acceptOp('(')) {
        names = [this.p.aliasName()];
        while (this.p.acceptOp(',')) names.push(this.p.aliasName());
        this.p.expectOp(')');
        if (names.length !== width)
          throw new SluiceError('INVALID_EXPRESSION', `[INVALID_INLINE_TABLE] VALUES has ${width} columns but ${names.length} names (in '${this.sql}')`);
      }
    }
    if (alias !== undefined) qualifiers.set(alias, names);
    const structs = rows.map(
      (r): Expr => ({ op: 'call', fn: 'named_struct', args: r.flatMap((e, i): Expr[] => [{ op: 'lit', value: names[i]!, type: 'string' }, e]) }),
    );
    return this.ctx.oneRow().select(new Column({ op: 'call', fn: 'inline', args: [{ op: 'call', fn: 'array', args: structs }] }));
  }

  private relation(qualifiers: Qualifiers): DataFrame {
    if (this.p.acceptWord('values')) return this.inlineTable(qualifiers);
    if (this.p.acceptOp('(')) {
      // A subquery: its own SELECT, with its own aggregates.
      const outerAggregates = this.aggregates;
      const df = this.unionOfSelects();
      this.aggregates = outerAggregates;
      this.p.expectOp(')');
      if (this.p.acceptWord('as') || (this.p.t.kind === 'name' && !this.followsRelation(this.p.t.text)))
        qualifiers.set(this.p.aliasName().toLowerCase(), df.columns);
      return df;
    }
    const t = this.p.t;
    if (t.kind !== 'name') throw syntaxError(this.sql, t, 'expected a view name');
    this.p.aliasName();
    const df = this.ctx.view(t.text);
    if (df === undefined) {
      throw new SluiceError(
        'TABLE_OR_VIEW_NOT_FOUND',
        `[TABLE_OR_VIEW_NOT_FOUND] The table or view \`${t.text}\` cannot be found: register it with df.createOrReplaceTempView('${t.text}') (in '${this.sql}')`,
      );
    }
    qualifiers.set(t.text.toLowerCase(), df.columns);
    if (this.p.acceptWord('as') || (this.p.t.kind === 'name' && !this.followsRelation(this.p.t.text))) {
      qualifiers.set(this.p.aliasName().toLowerCase(), df.columns);
    }
    return df;
  }

  /** A word that may follow a relation, so is not its alias. */
  private followsRelation(word: string): boolean {
    return ['where', 'group', 'having', 'union', 'on', 'using', 'lateral', 'order', 'sort', 'limit', ...JOIN_WORDS].includes(word.toLowerCase());
  }

  private joinType(): string | undefined {
    const p = this.p;
    let how: string | undefined;
    if (p.acceptWord('join')) return 'inner';
    if (p.acceptWord('inner')) how = 'inner';
    else if (p.acceptWord('left')) {
      how = p.acceptWord('semi') ? 'left_semi' : p.acceptWord('anti') ? 'left_anti' : 'left_outer';
      p.acceptWord('outer');
    } else if (p.acceptWord('semi')) how = 'left_semi';
    else if (p.acceptWord('anti')) how = 'left_anti';
    else if (p.isWord('right') || p.isWord('full') || p.isWord('cross')) {
      throw new SluiceError(
        'UNSUPPORTED_OPERATION',
        `${p.t.kind === 'name' ? p.t.text.toUpperCase() : ''} JOIN of a stream is not supported (in '${this.sql}')`,
      );
    } else return undefined;
    p.expectWord('join');
    return how;
  }

  /** `t.col` with t a view or alias of this SELECT is `col`. */
  /**
   * An ON join's right relation with the columns the left also has renamed `t.c` (t its alias, or
   * its name): rows hold one value per name, so `c.id = u.id` joins `id` with `u.id`, and
   * `u.id` (any of its qualifiers) names the right one after the join.
   */
  private renameShared(left: DataFrame, right: DataFrame, names: string[], qualifiers: Qualifiers): DataFrame {
    const shared = right.columns.filter((c) => left.columns.includes(c));
    const q = names.at(-1);
    if (shared.length === 0 || q === undefined) return right;
    const renamed = right.select(
      ...right.columns.map((c) => (shared.includes(c) ? new Column({ op: 'col', name: c }).alias(`${q}.${c}`) : new Column({ op: 'col', name: c }))),
    );
    for (const n of names) {
      qualifiers.set(n, renamed.columns);
      for (const c of shared) this.renamed.set(`${n}.${c}`.toLowerCase(), `${q}.${c}`);
    }
    return renamed;
  }

  private unqualified(e: Expr, qualifiers: Qualifiers): Expr {
    return rewrite(e, (node) => {
      if (node.op !== 'col') return undefined;
      const renamed = this.renamed.get(node.name.toLowerCase());
      if (renamed !== undefined) return { op: 'col', name: renamed };
      const dot = node.name.indexOf('.');
      return dot > 0 && qualifiers.has(node.name.slice(0, dot).toLowerCase()) ? { op: 'col', name: node.name.slice(dot + 1) } : node;
    });
  }
}

/** Plans `sql` (a SELECT over the views `views` finds) into a DataFrame. */
export function planSql(sql: string, ctx: SqlContext): DataFrame {
  if (typeof sql !== 'string') throw new SluiceError('INVALID_EXPRESSION', `sql takes SQL text, got ${sql === null ? 'null' : typeof sql}`);
  return new StatementParser(sql, ctx).query();
}
