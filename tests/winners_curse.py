#!/usr/bin/env python3
"""How far a host's best overstates itself (docs/report.md, "The best is
the highest of several medians").  A host's best is the variant with the
highest median of n = 3 samples among k candidates (a sha3 x86-64 host
with two compilers has up to 40); when several are close, noise picks
the winner, and its median is on average above its true rate.

Each of k variants has true rate 1 - i * step (step 0: a k-way tie, the
worst case); each sample is the rate times 1 + N(0, cv).  Printed per
(cv, k, step): the mean bias of the best's median over the true best,
and how often the report's 95% interval of best(A) / B (for n = 3 it is
min(a) / max(b) to max(a) / min(b)), B one variant of the same true
rate, holds the true ratio 1.  Standard library only; seeded, so the
figures are the same every time."""
import random
import statistics


def med3(rng, mu, cv):
    s = sorted(mu * (1 + rng.gauss(0, cv)) for _ in range(3))
    return s


def main(trials=20000):
    rng = random.Random(1)
    print("cv     k   step    bias of best  interval holds the truth")
    for cv in (0.002, 0.01, 0.03):
        for k in (1, 3, 8, 25):
            for step in (0.0, cv / 2):
                if k == 1 and step:
                    continue
                bias, held = [], 0
                for _ in range(trials):
                    a = max((med3(rng, 1 - i * step, cv) for i in range(k)),
                            key=lambda s: s[1])
                    b = med3(rng, 1, cv)
                    bias.append(a[1] - 1)
                    held += a[0] / b[2] <= 1 <= a[2] / b[0]
                print(f"{100 * cv:3.1f}%  {k:2d}  {100 * step:4.2f}%  "
                      f"{100 * statistics.mean(bias):+6.2f}%       "
                      f"{held / trials:.2f}")


if __name__ == "__main__":
    main()
