#!/usr/bin/env python3
"""Whether the encoder's vectors alone can tell a newer value of a fact stated in other words
from another fact near it (issue 84, "newest fact first in plain words"): 20 changes of a habit,
diet, job, home or tool (the newer must win) and 5 pairs of facts that both hold (the older must
keep its place), all in one user's store with two unrelated facts. The rule simulated: among
the six hits nearest the query, two statements are alike when their cosine is at least M and the
query's cosine to the farther is at least R of its cosine to the nearer; the best hit and its
mutual nearest neighbour, when alike (`--rule mutual`), or every hit joined to it through alike
pairs (`--rule union`), form a group whose newest ranks first. Prints the cases it gets wrong.

    python3 benches/newest_plain_words.py M R [--rule mutual|union] [--bin target/release/memloop]

Needs numpy (target/ort-venv has it: scripts/bench-venv.sh or benches/embed_peers.py's venv).
"""
import argparse
import json
import subprocess
import numpy as np

CHANGES = [
("I run five kilometres every morning before work","These days I swim laps at the community pool after work","What exercise do I do?"),
("I follow a vegetarian diet","Since last spring I've gone fully vegan, no dairy or eggs","What diet do I follow?"),
("I work as a nurse at St. Mary's hospital","I started a new job as a software developer at a fintech startup","What is my job?"),
("My home is a small flat in Leeds","We bought a house in the countryside near York and moved in","Where do I live?"),
("I write all my code in Vim","I switched my editor to VS Code","Which editor do I use?"),
("I drink three cups of coffee a day","I've given up caffeine and only have herbal tea now","What do I drink during the day?"),
("I commute to the office by car","Now I cycle to work every day","How do I get to work?"),
("My phone is an old iPhone 8","I replaced my phone with a Pixel 8","What phone do I use?"),
("I'm learning Spanish on Duolingo","I dropped Spanish and take Japanese lessons twice a week","Which language am I studying?"),
("I usually go to bed around midnight","Lately I'm asleep by ten every night","When do I go to sleep?"),
("I drive a 2012 Honda Civic","We sold the Honda and got an electric Kia","What car do I have?"),
("I lift weights at the YMCA three times a week","My workouts are home yoga sessions on weekday mornings","Where do I work out?"),
("I browse the web with Chrome","Firefox is my browser now","Which web browser do I use?"),
("I keep my notes in Evernote","All my notes live in Obsidian these days","Where do I keep my notes?"),
("I have cereal for breakfast","My mornings start with a green smoothie","What do I eat for breakfast?"),
("I play the guitar in a local band","I took up the cello and play in a community orchestra","What instrument do I play?"),
("My laptop runs Windows 10","I moved my laptop over to Linux Mint","Which operating system is on my laptop?"),
("I read the news on the BBC website","I get my news from a weekly print magazine now","Where do I get my news?"),
("I shop for groceries at Tesco","Our groceries come from a local farm box delivery","Where do I buy groceries?"),
("My bank is Barclays","I moved my accounts to Monzo","Which bank do I use?"),
]
HOLDING = [
("I have a dog named Rex","I adopted a cat called Tom","What is my dog's name?"),
("My sister Anna lives in Berlin","My brother Tom lives in Madrid","Where does my sister live?"),
("I'm allergic to penicillin","I'm allergic to peanuts","Which medicine am I allergic to?"),
("I play tennis on Saturdays","I play chess online on Sundays","When do I play tennis?"),
("My daughter goes to Oak Primary School","My son started at Hill High School","Which school does my daughter attend?"),
]

CASES = CHANGES + HOLDING
DISTRACTORS = ["My favourite film is Alien", "I was born in 1985"]
DEPTH = 6  # the hits the rule looks at


def embed(binary, lines, query=False):
    """The model's vectors of `lines` through `memloop embed` (one JSON string a line)."""
    out = subprocess.run([binary, "embed"] + (["--query"] if query else []),
                         input="\n".join(json.dumps(l) for l in lines),
                         capture_output=True, text=True, check=True).stdout
    return np.array([json.loads(l) for l in out.splitlines()])


def group(top, s, docs, rule, m, r):
    """The hits the rule groups with the best one (`top` ranked, `s` the query's cosines)."""
    def alike(a, b):
        near, far = max(s[a], s[b]), min(s[a], s[b])
        return far >= r * near and docs[a] @ docs[b] >= m
    if rule == "union":
        parent = {j: j for j in top}
        def root(x):
            while parent[x] != x:
                x = parent[x]
            return x
        for i, a in enumerate(top):
            for b in top[i + 1:]:
                if alike(a, b):
                    ra, rb = root(a), root(b)
                    parent[max(ra, rb)] = min(ra, rb)
        return [j for j in top if root(j) == root(top[0])]
    def nearest(x):
        return max((j for j in top if j != x), key=lambda j: docs[x] @ docs[j])
    first = top[0]
    return [first] + [j for j in top[1:]
                      if alike(first, j) and nearest(first) == j and nearest(j) == first]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("m", type=float, help="the least cosine between two statements of one thing")
    p.add_argument("r", type=float, help="the least share of the nearer's query cosine the farther has")
    p.add_argument("--rule", choices=["mutual", "union"], default="mutual",
                   help="the best hit and its mutual nearest neighbour, or a union over the six")
    p.add_argument("--bin", default="target/release/memloop")
    a = p.parse_args()
    texts = [t for c in CASES for t in c[:2]] + DISTRACTORS
    docs = embed(a.bin, texts)
    queries = embed(a.bin, [c[2] for c in CASES], query=True)
    # Stored in list order: each case's newer statement after its older, the distractors first.
    made = lambda j: j if j < 2 * len(CASES) else -1
    wrong = 0
    for i, (_, _, question) in enumerate(CASES):
        s = docs @ queries[i]
        top = list(np.argsort(-s)[:DEPTH])
        old, new = 2 * i, 2 * i + 1
        winner = max(group(top, s, docs, a.rule, a.m, a.r), key=made)
        if winner != (new if i < len(CHANGES) else old):
            wrong += 1
            print(f"wrong: pair {docs[old] @ docs[new]:.2f}, query {s[old]:.2f} / {s[new]:.2f}: "
                  f"{question} -> {texts[winner]}")
    print(f"{wrong} of {len(CASES)} wrong ({len(CHANGES)} changes, {len(HOLDING)} facts that both hold)")


if __name__ == "__main__":
    main()
