"""OmniACT's write penalty measure: our sentence-level BLEU over word and punctuation tokens."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

#: BLEU: the highest n-gram order, and the count given to an order with no match
#: (smoothing "method 1" of Chen and Cherry, 2014).
BLEU_MAX_N = 4
BLEU_EPSILON = 0.1

_TOKEN = re.compile(r"\w+|[^\w\s]")


def tokenize(text: str) -> list[str]:
    """Word and punctuation tokens: ``"=SUM(A1:A3)"`` -> ``= SUM ( A1 : A3 )``."""
    return _TOKEN.findall(text)


def _ngrams(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def bleu(reference: str, hypothesis: str) -> float:
    """Sentence-level BLEU of ``hypothesis`` against one ``reference``, in [0, 1].

    Tokens from :func:`tokenize` (case kept). Orders 1 to ``N = min(4, reference
    length)`` with uniform weights, so a one-word reference is scored on unigrams.
    Clipped n-gram precision ``p_n = matches / hypothesis n-grams``; an order with no
    match counts ``epsilon = 0.1`` matches instead (Chen and Cherry's method 1), over at
    least one n-gram. Brevity penalty ``exp(1 - r / c)`` when the hypothesis (``c``
    tokens) is shorter than the reference (``r``). Identical token lists score 1; an
    empty hypothesis scores 0 (1 if the reference is empty too).
    """
    ref, hyp = tokenize(reference), tokenize(hypothesis)
    if ref == hyp:
        return 1.0
    if not ref or not hyp:
        return 0.0
    max_n = min(BLEU_MAX_N, len(ref))
    log_sum = 0.0
    for n in range(1, max_n + 1):
        hyp_grams = _ngrams(hyp, n)
        ref_grams = _ngrams(ref, n)
        total = sum(hyp_grams.values())
        matches = sum(min(count, ref_grams[gram]) for gram, count in hyp_grams.items())
        precision = matches / total if matches else BLEU_EPSILON / max(total, 1)
        log_sum += math.log(precision) / max_n
    brevity = 1.0 if len(hyp) >= len(ref) else math.exp(1.0 - len(ref) / len(hyp))
    return brevity * math.exp(log_sum)
