"""The Craits benchmark: fixed deal sets, a frozen zoo of opponents, report cards.

- :mod:`craits.benchmark.deal_sets` — the deals, shipped as data and checked by their hash;
- :mod:`craits.benchmark.suite` — suite ``v1``: its tables, deal sets, zoo and reference;
- :mod:`craits.benchmark.card` — a report card from the games: win rates, mean scores,
  paired estimates against the reference, ratings; its JSON, Markdown and chart;
- :mod:`craits.benchmark.evaluate` — ``craits evaluate``: the suite played (resumably, on
  any number of workers) and the card written.

How to report results with it: docs/benchmark.md.
"""
