/**
 * A small interpreter for the subset of DynamoDB condition and update expressions the adapters use, so tests can
 * check what an expression *does* to a row instead of only how it is spelled.
 *
 * Semantics follow DynamoDB: a comparison involving a missing attribute (or values of different types) is false;
 * `attribute_exists` / `attribute_not_exists` test presence; `IN` is equality with any listed operand.
 * Only what the adapters need is supported: OR, AND, NOT, parentheses, = <> < <= > >=, BETWEEN, IN,
 * attribute_exists, attribute_not_exists, begins_with; updates with SET (value, `path + value`, if_not_exists(path, value),
 * list_append(a, b), and those combined with + or -) and REMOVE.
 */

export type Row = Record<string, unknown>;
/** Any plain object, e.g. an Occurrence (interfaces have no index signature). */
export type RowLike = object;

export interface ExpressionInput {
  readonly ExpressionAttributeNames?: Record<string, string>;
  readonly ExpressionAttributeValues?: Record<string, unknown>;
}

type Token = { kind: 'name' | 'value' | 'word' | 'op' | 'punct'; text: string };

function tokenize(expression: string): Token[] {
  const tokens: Token[] = [];
  const re = /\s*(?:(#[A-Za-z0-9_]+)|(:[A-Za-z0-9_]+)|(<>|<=|>=|=|<|>|\+|-)|([(),])|([A-Za-z_][A-Za-z0-9_]*))/y;
  let index = 0;
  while (index < expression.length) {
    if (/^\s*$/.test(expression.slice(index))) break;
    re.lastIndex = index;
    const m = re.exec(expression);
    if (!m)
      throw new Error(`cannot tokenize ${JSON.stringify(expression.slice(index))} in ${JSON.stringify(expression)}`);
    index = re.lastIndex;
    if (m[1]) tokens.push({ kind: 'name', text: m[1] });
    else if (m[2]) tokens.push({ kind: 'value', text: m[2] });
    else if (m[3]) tokens.push({ kind: 'op', text: m[3] });
    else if (m[4]) tokens.push({ kind: 'punct', text: m[4] });
    else tokens.push({ kind: 'word', text: m[5] ?? '' });
  }
  return tokens;
}

const MISSING = Symbol('missing');
type Operand = unknown | typeof MISSING;

class Parser {
  private at = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly input: ExpressionInput,
    private readonly row: Row | undefined,
  ) {}

  done(): boolean {
    return this.at >= this.tokens.length;
  }
  private peek(): Token | undefined {
    return this.tokens[this.at];
  }
  private isWord(word: string): boolean {
    const t = this.peek();
    return t !== undefined && t.kind === 'word' && t.text.toUpperCase() === word;
  }
  private expect(text: string): void {
    const t = this.tokens[this.at++];
    if (t === undefined || t.text.toUpperCase() !== text) throw new Error(`expected ${text}, got ${t?.text ?? 'end'}`);
  }

  orExpr(): boolean {
    let value = this.andExpr();
    while (this.isWord('OR')) {
      this.at++;
      const right = this.andExpr();
      value = value || right;
    }
    return value;
  }
  private andExpr(): boolean {
    let value = this.notExpr();
    while (this.isWord('AND')) {
      this.at++;
      const right = this.notExpr();
      value = value && right;
    }
    return value;
  }
  private notExpr(): boolean {
    if (this.isWord('NOT')) {
      this.at++;
      return !this.notExpr();
    }
    return this.primary();
  }
  private primary(): boolean {
    const t = this.peek();
    if (t?.kind === 'punct' && t.text === '(') {
      this.at++;
      const value = this.orExpr();
      this.expect(')');
      return value;
    }
    if (t?.kind === 'word' && (t.text === 'attribute_exists' || t.text === 'attribute_not_exists')) {
      this.at++;
      this.expect('(');
      const operand = this.operand();
      this.expect(')');
      return t.text === 'attribute_exists' ? operand !== MISSING : operand === MISSING;
    }
    if (t?.kind === 'word' && t.text === 'begins_with') {
      this.at++;
      this.expect('(');
      const operand = this.operand();
      this.expect(',');
      const prefix = this.operand();
      this.expect(')');
      return typeof operand === 'string' && typeof prefix === 'string' && operand.startsWith(prefix);
    }
    const left = this.operand();
    const next = this.tokens[this.at++];
    if (next === undefined) throw new Error('expected a comparator');
    if (next.kind === 'op') return compare(left, next.text, this.operand());
    if (next.kind === 'word' && next.text.toUpperCase() === 'BETWEEN') {
      const low = this.operand();
      this.expect('AND');
      const high = this.operand();
      return compare(left, '>=', low) && compare(left, '<=', high);
    }
    if (next.kind === 'word' && next.text.toUpperCase() === 'IN') {
      this.expect('(');
      const options = [this.operand()];
      while (this.peek()?.text === ',') {
        this.at++;
        options.push(this.operand());
      }
      this.expect(')');
      return options.some((o) => compare(left, '=', o));
    }
    throw new Error(`unexpected ${next.text}`);
  }
  operand(): Operand {
    const t = this.tokens[this.at++];
    if (t?.kind === 'name' || isPlainName(t)) {
      const attribute = attributeOf(this.input, t as Token);
      if (this.row === undefined || !(attribute in this.row) || this.row[attribute] === undefined) return MISSING;
      return this.row[attribute];
    }
    if (t?.kind === 'value') return resolveValue(this.input, t.text);
    throw new Error(`expected an operand, got ${t?.text ?? 'end'}`);
  }
}

/** Words an expression gives a meaning of their own; any other bare word is an attribute's name. */
const KEYWORDS = new Set(['AND', 'OR', 'NOT', 'BETWEEN', 'IN', 'SET', 'REMOVE', 'ADD', 'DELETE']);
const FUNCTIONS = new Set(['attribute_exists', 'attribute_not_exists', 'begins_with', 'if_not_exists', 'list_append']);

/** A bare attribute name (DynamoDB takes one that is no reserved word without a # placeholder). */
function isPlainName(t: Token | undefined): boolean {
  return t?.kind === 'word' && !KEYWORDS.has(t.text.toUpperCase()) && !FUNCTIONS.has(t.text);
}

/** The attribute a name token refers to: a placeholder's name, or the bare name itself. */
function attributeOf(input: ExpressionInput, t: Token): string {
  return t.kind === 'name' ? resolveName(input, t.text) : t.text;
}

function resolveName(input: ExpressionInput, placeholder: string): string {
  const name = input.ExpressionAttributeNames?.[placeholder];
  if (name === undefined) throw new Error(`name placeholder ${placeholder} is not defined`);
  return name;
}

function resolveValue(input: ExpressionInput, placeholder: string): unknown {
  const values = input.ExpressionAttributeValues ?? {};
  if (!(placeholder in values)) throw new Error(`value placeholder ${placeholder} is not defined`);
  return values[placeholder];
}

function compare(left: Operand, op: string, right: Operand): boolean {
  if (left === MISSING || right === MISSING) return false;
  if (typeof left !== typeof right || (typeof left !== 'string' && typeof left !== 'number')) {
    return op === '<>';
  }
  const a = left as string | number;
  const b = right as string | number;
  switch (op) {
    case '=':
      return a === b;
    case '<>':
      return a !== b;
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    case '>=':
      return a >= b;
    default:
      throw new Error(`unknown comparator ${op}`);
  }
}

/** Does the condition hold for this row (undefined: no item, as DynamoDB sees a missing row)? */
export function evaluateCondition(expression: string, input: ExpressionInput, row: RowLike | undefined): boolean {
  const parser = new Parser(tokenize(expression), input, row as Row | undefined);
  const value = parser.orExpr();
  if (!parser.done()) throw new Error(`trailing tokens in ${JSON.stringify(expression)}`);
  return value;
}

/** The row after the update expression (SET and REMOVE clauses only). */
export function applyUpdate(expression: string, input: ExpressionInput, rowLike: RowLike): Row {
  const row = rowLike as Row;
  const tokens = tokenize(expression);
  const out: Row = { ...row };
  const touched = new Set<string>();
  const touch = (attribute: string) => {
    // DynamoDB: "Two document paths overlap" when one update names an attribute twice.
    if (touched.has(attribute)) throw new Error(`attribute ${attribute} is updated twice`);
    touched.add(attribute);
  };
  let at = 0;
  const operand = (t: Token | undefined): unknown => {
    if (t?.kind === 'value') return resolveValue(input, t.text);
    if (t?.kind === 'name' || isPlainName(t)) return row[attributeOf(input, t as Token)];
    if (t?.kind === 'word' && (t.text === 'if_not_exists' || t.text === 'list_append')) {
      if (tokens[at++]?.text !== '(') throw new Error(`expected ( after ${t.text}`);
      const pathToken = tokens[at];
      const first = operand(tokens[at++]);
      if (tokens[at++]?.text !== ',') throw new Error(`expected , in ${t.text}`);
      const second = operand(tokens[at++]);
      if (tokens[at++]?.text !== ')') throw new Error(`expected ) closing ${t.text}`);
      if (t.text === 'if_not_exists') {
        if (pathToken?.kind !== 'name') throw new Error('if_not_exists needs an attribute path first');
        return first === undefined ? second : first;
      }
      if (!Array.isArray(first) || !Array.isArray(second)) throw new Error('list_append of a non-list');
      return [...first, ...second];
    }
    throw new Error(`expected an operand, got ${t?.text ?? 'end'}`);
  };
  while (at < tokens.length) {
    const clause = tokens[at++];
    if (clause?.kind !== 'word') throw new Error(`expected SET or REMOVE, got ${clause?.text}`);
    const keyword = clause.text.toUpperCase();
    do {
      if (tokens[at]?.text === ',') at++;
      const target = tokens[at++];
      if (target?.kind !== 'name' && !isPlainName(target))
        throw new Error(`expected an attribute name, got ${target?.text ?? 'end'}`);
      const attribute = attributeOf(input, target as Token);
      touch(attribute);
      if (keyword === 'REMOVE') {
        delete out[attribute];
      } else if (keyword === 'SET') {
        if (tokens[at++]?.text !== '=') throw new Error('expected = in SET');
        let value = operand(tokens[at++]);
        const op = tokens[at];
        if (op?.kind === 'op' && (op.text === '+' || op.text === '-')) {
          at++;
          const right = operand(tokens[at++]);
          if (typeof value !== 'number' || typeof right !== 'number') throw new Error('arithmetic on a non-number');
          value = op.text === '+' ? value + right : value - right;
        }
        out[attribute] = value;
      } else {
        throw new Error(`unsupported clause ${keyword}`);
      }
    } while (tokens[at]?.text === ',');
  }
  return out;
}

/**
 * DynamoDB rejects a request whose ExpressionAttributeNames or ExpressionAttributeValues define a placeholder that
 * no expression uses, or whose expressions use an undefined one. Returns the problems (empty when valid).
 */
export function placeholderProblems(expressions: (string | undefined)[], input: ExpressionInput): string[] {
  const used = new Set<string>();
  for (const expression of expressions) {
    if (expression === undefined) continue;
    for (const t of tokenize(expression)) if (t.kind === 'name' || t.kind === 'value') used.add(t.text);
  }
  const defined = [
    ...Object.keys(input.ExpressionAttributeNames ?? {}),
    ...Object.keys(input.ExpressionAttributeValues ?? {}),
  ];
  const problems: string[] = [];
  for (const p of defined) if (!used.has(p)) problems.push(`${p} is defined but unused`);
  for (const p of used) if (!defined.includes(p)) problems.push(`${p} is used but undefined`);
  return problems;
}

/** Attribute names an expression refers to (after resolving placeholders). */
export function attributesOf(expression: string, input: ExpressionInput): string[] {
  return tokenize(expression)
    .filter((t) => t.kind === 'name')
    .map((t) => resolveName(input, t.text));
}
