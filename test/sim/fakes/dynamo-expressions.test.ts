/** The interpreter other tests rely on: if it said yes to everything, their condition checks could not fail. */
import { describe, expect, it } from 'vitest';
import {
  applyUpdate,
  attributesOf,
  evaluateCondition,
  placeholderProblems,
} from '../../../sim/fakes/dynamo-expressions';

const input = {
  ExpressionAttributeNames: { '#s': 'status', '#n': 'count', '#t': 'time' },
  ExpressionAttributeValues: { ':a': 'A', ':b': 'B', ':one': 1, ':t': '2026-01-01T00:00:00Z' },
};

describe('dynamo-expressions test helper', () => {
  it('applies if_not_exists and list_append as DynamoDB does, alone and with arithmetic', () => {
    const fns = {
      ExpressionAttributeNames: { '#n': 'count', '#h': 'history' },
      ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':none': [], ':entry': [{ a: 1 }] },
    };
    expect(applyUpdate('SET #n = if_not_exists(#n, :zero) + :one', fns, {})).toEqual({ count: 1 });
    expect(applyUpdate('SET #n = if_not_exists(#n, :zero) + :one', fns, { count: 4 })).toEqual({ count: 5 });
    expect(applyUpdate('SET #h = list_append(if_not_exists(#h, :none), :entry)', fns, {})).toEqual({
      history: [{ a: 1 }],
    });
    expect(applyUpdate('SET #h = list_append(if_not_exists(#h, :none), :entry)', fns, { history: [{ a: 0 }] })).toEqual(
      { history: [{ a: 0 }, { a: 1 }] },
    );
    expect(() => applyUpdate('SET #h = list_append(#n, :entry)', fns, { count: 1 })).toThrow(
      'list_append of a non-list',
    );
  });

  it('evaluates comparisons, AND/OR/NOT, parentheses and IN', () => {
    expect(evaluateCondition('#s = :a', input, { status: 'A' })).toBe(true);
    expect(evaluateCondition('#s = :a', input, { status: 'B' })).toBe(false);
    expect(evaluateCondition('#s = :a OR #s = :b', input, { status: 'B' })).toBe(true);
    expect(evaluateCondition('#s = :a AND (#n < :one OR #s = :b)', input, { status: 'A', count: 1 })).toBe(false);
    expect(evaluateCondition('#s = :a AND (#n < :one OR #s = :b)', input, { status: 'A', count: 0 })).toBe(true);
    expect(evaluateCondition('NOT #s = :a', input, { status: 'A' })).toBe(false);
    expect(evaluateCondition('#s IN (:a, :b)', input, { status: 'B' })).toBe(true);
    expect(evaluateCondition('#s IN (:a, :b)', input, { status: 'C' })).toBe(false);
    expect(evaluateCondition('#t BETWEEN :t AND :t', input, { time: '2026-01-01T00:00:00Z' })).toBe(true);
  });

  it('treats a missing attribute as failing every comparison, and checks presence with attribute_(not_)exists', () => {
    expect(evaluateCondition('#t <= :t', input, {})).toBe(false);
    expect(evaluateCondition('#t > :t', input, {})).toBe(false);
    expect(evaluateCondition('attribute_exists(#s)', input, {})).toBe(false);
    expect(evaluateCondition('attribute_not_exists(#s)', input, {})).toBe(true);
    expect(evaluateCondition('attribute_not_exists(#s)', input, undefined)).toBe(true);
    expect(evaluateCondition('attribute_exists(#s)', input, { status: 'A' })).toBe(true);
  });

  it('rejects undefined placeholders', () => {
    expect(() => evaluateCondition('#x = :a', input, {})).toThrow(/#x/);
    expect(() => evaluateCondition('#s = :x', input, {})).toThrow(/:x/);
  });

  it('applies SET (with +) and REMOVE, and rejects an attribute updated twice', () => {
    expect(applyUpdate('SET #s = :b, #n = #n + :one REMOVE #t', input, { status: 'A', count: 2, time: 'x' })).toEqual({
      status: 'B',
      count: 3,
    });
    expect(() => applyUpdate('SET #s = :b REMOVE #s', input, { status: 'A' })).toThrow(/twice/);
  });

  it('reports unused and undefined placeholders, and lists the attributes an expression names', () => {
    expect(placeholderProblems(['#s = :a'], input)).toEqual(
      expect.arrayContaining(['#n is defined but unused', ':b is defined but unused']),
    );
    expect(
      placeholderProblems(['#s = :a AND #q = :one'], {
        ExpressionAttributeNames: { '#s': 's' },
        ExpressionAttributeValues: { ':a': 1, ':one': 1 },
      }),
    ).toEqual(['#q is used but undefined']);
    expect(attributesOf('#s = :a AND #t < :t', input)).toEqual(['status', 'time']);
  });
});
