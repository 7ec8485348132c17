"""Leave-one-site-out study of "no good match" rules (bench/abstain.sh writes the inputs)."""
import json
import sys

work, names = sys.argv[1], sys.argv[2:]
MODEL = 0.43


def hybrid(path):
    return json.load(open(path))["outcomes"]["hybrid"]


median = {}
rows = {}
for n in names:
    probes = sorted(o["best_cosine"] for o in hybrid(f"{work}/{n}-probes.json"))
    median[n] = probes[len(probes) // 2]
    rows[n] = [(o["answerable"], o["best_cosine"] or 0.0, o["all_words"])
               for o in hybrid(f"{work}/{n}-golden.json")]


def outcome(n, t):
    """(declined, unanswerable, flagged, answerable) at threshold t."""
    flag = [(a, c < t and not w) for a, c, w in rows[n]]
    un = [f for a, f in flag if not a]
    an = [f for a, f in flag if a]
    return sum(un), len(un), sum(an), len(an)


def utility(o):
    return (o[0] / o[1] if o[1] else 0.0) - 2 * o[2] / o[3]


offsets = [x / 400 for x in range(-80, 240)]
rules = {
    "one fixed threshold": lambda n, c: c,
    "probes' median + c": lambda n, c: median[n] + c,
    "half the median + c": lambda n, c: median[n] / 2 + c,
}
print("probes' median best cosine: " + ", ".join(f"{n} {median[n]:.3f}" for n in names))
for label, rule in rules.items():
    total = [0, 0, 0, 0]
    parts = []
    for held in names:
        train = [n for n in names if n != held]
        c = max(offsets, key=lambda c: (sum(utility(outcome(n, rule(n, c))) for n in train), -abs(c)))
        o = outcome(held, rule(held, c))
        total = [a + b for a, b in zip(total, o)]
        parts.append(f"{held} {o[0]}/{o[1]} {o[2]}/{o[3]} (t {rule(held, c):.3f})")
    print(f"{label:22s} held out: {total[0]}/{total[1]} declined, {total[2]}/{total[3]} flagged  ::  "
          + " | ".join(parts))
total = [0, 0, 0, 0]
parts = []
for n in names:
    o = outcome(n, (MODEL + median[n]) / 2)
    total = [a + b for a, b in zip(total, o)]
    parts.append(f"{n} {o[0]}/{o[1]} {o[2]}/{o[3]}")
print(f"{'as built (midpoint)':22s}           {total[0]}/{total[1]} declined, {total[2]}/{total[3]} flagged  ::  "
      + " | ".join(parts))
