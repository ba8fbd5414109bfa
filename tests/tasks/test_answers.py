"""Reading a final answer out of replies written the way models write them: chain of thought, markdown,
LaTeX, chatty trailers, changed minds, hedges. Each row is a reply and the verdict a careful reader would
give; ``None`` is an invalid answer (scored wrong)."""

import re
import time
from fractions import Fraction

import pytest

from lexicoord.tasks import answers
from lexicoord.tasks.answers import Declaration, declarations, format_number, read_label, read_letter, read_number

COT = "Janet's ducks lay 16 eggs a day. She eats 3 and bakes with 4, so 16 - 3 - 4 = 9 are left.\n"

GSM8K_REPLIES = [
    # the formats this project's prompts and documentation name
    pytest.param(COT + "She sells them at $2 each: 9 * 2 = 18.\n#### 18", "18", id="hashes-after-cot"),
    pytest.param("Janet has 16 - 3 - 4 = 9 eggs, 9 * 2 = 18.\n#### 18", "18", id="hashes-after-working"),
    pytest.param("So the change is \\boxed{-3}", "-3", id="boxed-negative"),
    pytest.param("**Answer:** 42 dollars", "42", id="bold-answer-units"),
    pytest.param("First I thought 7. Final answer: 9", "9", id="final-answer-after-sentence"),
    pytest.param("#### 5\nOn reflection, the answer is 6 apples.", "6", id="later-clause-wins"),
    pytest.param("She pays 0.75 per egg, so the answer is 12.", "12", id="the-answer-is-clause"),
    pytest.param("The answer is $1,250.50.", "1250.5", id="currency-thousands-decimal"),
    # signs
    pytest.param("ANSWER: -12", "-12", id="answer-colon-negative"),
    pytest.param("The net change is a loss, so the answer is -7.", "-7", id="clause-negative"),
    pytest.param("The temperature ends below zero.\n#### -7", "-7", id="hashes-negative"),
    pytest.param("The answer is −4 degrees.", "-4", id="unicode-minus"),
    pytest.param("The answer is –3.", "-3", id="en-dash-minus"),
    pytest.param("Her balance is now \\boxed{-\\$5}.", "-5", id="boxed-negative-currency"),
    pytest.param("Answer: $-5", "-5", id="currency-then-sign"),
    pytest.param("Answer:\n- 18", "18", id="bullet-dash-is-not-a-sign"),
    # a marker is a declaration, not any use of the word
    pytest.param("#### 42\nI hope this answer helps.", "42", id="trailer-uses-the-word-answer"),
    pytest.param("Answer: 15\nThis answer is based on 3 trips of 5 people.", "15", id="this-answer-is-not-a-marker"),
    pytest.param("Answer: 22\n\nThe other agent's answer of 20 misses the tax.", "22", id="answer-of-is-not-a-marker"),
    pytest.param("#### 18\nThe answer is that she makes money every day.", "18", id="unreadable-clause-falls-back"),
    pytest.param("#### 18\n\nI hope this helps with your 2 questions!", "18", id="number-in-trailer-ignored"),
    pytest.param("#### 30\n\nLet me know if you have any other questions! 😊", "30", id="chatty-trailer"),
    pytest.param("The answer is not 10.\nIt is 3 × 4 = 12.\n#### 12", "12", id="negated-clause-is-no-marker"),
    pytest.param("The other agent said 'the answer is 20', but it forgot the tax.\n#### 22", "22", id="quoted-other-agent"),
    # equations after a marker: the result
    pytest.param("Answer: 2 + 3 = 5", "5", id="equation-after-marker"),
    pytest.param("Answer: 9 eggs × $2 = $18", "18", id="equation-with-units"),
    pytest.param("Answer: 18 (since 9 × 2 = 18)", "18", id="parenthetical-check"),
    pytest.param("Answer: After selling 9 eggs, she makes $18.", "18", id="sentence-working-up-to-result"),
    pytest.param("Answer: 18 dollars (9 eggs at $2 each)", "18", id="opens-with-result-then-working"),
    pytest.param("Answer: she makes $18 a day. She has 9 eggs left.", "18", id="result-sentence-then-more"),
    pytest.param("Answer: She has 16 - 3 - 4 = 9 eggs left.", "9", id="sentence-with-equation"),
    pytest.param("\\boxed{x = 5}", "5", id="boxed-equation"),
    pytest.param("The answer is 2 + 3 = 5.", "5", id="clause-equation"),
    # LaTeX and markdown as models write them
    pytest.param(COT + "The final answer is: $\\boxed{18}$", "18", id="llama-boxed"),
    pytest.param("Final Answer: The final answer is $\\boxed{18}$. I hope it is correct.", "18", id="minerva-style"),
    pytest.param(COT + "Therefore, the final answer is \\(\\boxed{18}\\).", "18", id="qwen-inline-math"),
    pytest.param("\\boxed{\\$18}", "18", id="boxed-escaped-dollar"),
    pytest.param("So she earns $\\boxed{18 \\text{ dollars}}$ per day.", "18", id="boxed-text-units"),
    pytest.param("\\boxed{\\frac{3}{4}}", "3/4", id="boxed-frac"),
    pytest.param("The answer is $\\dfrac{3}{4}$.", "3/4", id="dfrac"),
    pytest.param("\\boxed{1{,}000}", "1000", id="latex-braced-comma"),
    pytest.param("\\boxed{1\\,000}", "1000", id="latex-thin-space"),
    pytest.param("\\boxed{\\frac{1}{2}} then \\boxed{7}", "7", id="last-box-on-a-line"),
    pytest.param("**Answer:** **18**", "18", id="bold-value"),
    pytest.param("Adding it up, **Final Answer: 18**", "18", id="bold-marker-mid-line"),
    pytest.param("The answer is **$18**.", "18", id="clause-bold-currency"),
    pytest.param("### Final Answer\n\nJanet makes **$18** every day at the farmers' market.", "18", id="heading-next-line"),
    pytest.param("## Final Answer\n\n\\[\n\\boxed{18}\n\\]", "18", id="heading-display-box"),
    pytest.param("**Step 1:** 16 − 3 − 4 = 9\n**Step 2:** 9 × $2 = $18\n\n**Answer:** Janet makes $18 every day.", "18",
                 id="gpt-steps-bold-answer"),
    pytest.param("#### Step 1: Eggs left\n16 - 3 - 4 = 9\n#### Step 2: Money\n9 * 2 = 18\n\nShe makes 18 dollars.", "18",
                 id="h4-headings-are-not-hashes"),
    pytest.param("#### 1. Eggs left\n16 - 7 = 9\n#### 2. Money\n9 × 2 = 18", "18", id="numbered-h4-headings"),
    pytest.param("- Answer: 7", "7", id="bullet-answer"),
    pytest.param("> **Final answer:** 7", "7", id="blockquote-bold"),
    pytest.param("Answer:\n\n**54**", "54", id="value-on-next-line"),
    pytest.param("<think>Maybe 10? No: 4 * 3 = 12.</think>\nThe answer is 12.", "12", id="think-tags"),
    # number shapes
    pytest.param("Answer: 3/4 of a cup", "3/4", id="plain-fraction"),
    pytest.param("Answer: 0.75", "3/4", id="decimal"),
    pytest.param("ANSWER: .5", "1/2", id="leading-point"),
    pytest.param("So the answer is 5.5 hours.", "11/2", id="decimal-hours"),
    pytest.param("The answer is 2 1/2 hours.", "5/2", id="mixed-number"),
    pytest.param("Answer: 12%", "12", id="percent"),
    pytest.param("Answer: 12 apples", "12", id="units"),
    pytest.param("#### 18.00", "18", id="trailing-zeros"),
    pytest.param("The answer is 1e3.", "1000", id="exponent"),
    pytest.param("####72", "72", id="hashes-no-space"),
    pytest.param("#### $1,080", "1080", id="hashes-currency-thousands"),
    pytest.param("Final answer: 1,000,000", "1000000", id="millions"),
    pytest.param("answer: 25", "25", id="lowercase-marker"),
    pytest.param("The answer is: 64", "64", id="clause-colon"),
    pytest.param("So the correct answer is 35 minutes.", "35", id="correct-answer-is"),
    pytest.param("The answer is approximately 42.", "42", id="approximately"),
    pytest.param("My final answer is 8.", "8", id="my-final-answer"),
    # no declaration: the last number of the reply
    pytest.param("It takes 3 hours.\nTotal: 3", "3", id="no-marker-last-number"),
    pytest.param("She has 9 eggs and sells them for $2 each, which makes 18 dollars.", "18", id="no-marker-prose"),
    pytest.param("16 - 3 - 4 = 9\n9 * 2 = 18", "18", id="no-marker-equations"),
    # invalid
    pytest.param("I cannot tell.", None, id="nothing"),
    pytest.param("She bought 3 packs of 12 pens.\nAnswer: I cannot determine this.", None, id="declared-unreadable"),
    pytest.param("The answer is 12 or 13, depending on rounding.", None, id="hedged-or"),
    pytest.param("Answer: 3-4 hours", None, id="hedged-range"),
    pytest.param("Answer: 5 to 7 days", None, id="hedged-to"),
    pytest.param("#### unknown", None, id="hashes-word"),
    pytest.param("The answer is what she earns: 16 - 3 - 4 = 9 eggs, and 9 × 2 = 18 dollars.", "18",
                 id="unreadable-clause-then-working"),
    pytest.param("Putting it together, my final answer: 18", "18", id="my-final-answer-colon-mid-line"),
]


@pytest.mark.parametrize("reply,expected", GSM8K_REPLIES)
def test_gsm8k_numbers(reply: str, expected: str | None) -> None:
    got = read_number(reply)
    assert (None if got is None else Fraction(got)) == (None if expected is None else Fraction(expected))


MMLU_REPLIES = [
    # the formats this project's prompts and documentation name
    pytest.param("ANSWER: C", "C", id="inspect-style"),
    pytest.param("The answer is (C).", "C", id="clause-paren"),
    pytest.param("Answer: B) Paris", "B", id="letter-paren-text"),
    pytest.param("\\boxed{D}", "D", id="boxed"),
    pytest.param("**Answer: A**", "A", id="bold-answer"),
    pytest.param("Option A is tempting, but B is right.\nAnswer: B", "B", id="reasoning-then-answer"),
    pytest.param("Answer: A? No. Answer: C", "C", id="last-on-one-line"),
    pytest.param("Final answer: \\boxed{A}", "A", id="final-answer-boxed"),
    pytest.param("End your reply with 'Answer: <letter>', one of A, B, C or D.", None, id="echoed-instruction"),
    # case and form
    pytest.param("ANSWER: c", "C", id="lowercase-letter"),
    pytest.param("Answer: (c)", "C", id="lowercase-paren"),
    pytest.param("answer: d", "D", id="lowercase-all"),
    pytest.param("Answer: a", "A", id="lowercase-a-alone"),
    pytest.param("Answer: c) 1/2", "C", id="lowercase-letter-paren-text"),
    pytest.param("Answer: C)", "C", id="letter-close-paren"),
    pytest.param("Answer: [C]", "C", id="brackets"),
    pytest.param("Answer: `B`", "B", id="backticks"),
    pytest.param("answer: option c", "C", id="option-lowercase"),
    pytest.param("The answer is Option C.", "C", id="clause-option"),
    pytest.param("the correct option is c.", "C", id="correct-option-lowercase"),
    pytest.param("The correct answer is **(B) 42**.", "B", id="clause-bold-paren"),
    pytest.param("**Answer:** D", "D", id="bold-marker"),
    pytest.param("**Final Answer:** C", "C", id="bold-final-answer"),
    pytest.param("### Final Answer\n\n**C) Mitochondria**", "C", id="heading-next-line"),
    pytest.param("The answer is $\\boxed{\\text{(B)}}$", "B", id="boxed-text-paren"),
    pytest.param("Final Answer: The final answer is C. I hope it is correct.", "C", id="minerva-style"),
    pytest.param("**Answer: (D) 4**\n\nI hope this helps!", "D", id="bold-with-option-text"),
    pytest.param("Answer: A. The enzyme lowers activation energy.", "A", id="letter-then-explanation"),
    pytest.param("Answer: D. A, B and C are all incorrect.", "D", id="letter-then-others-named"),
    pytest.param("The answer is: \n\nD", "D", id="clause-next-line"),
    pytest.param("My answer: D", "D", id="my-answer"),
    pytest.param("Answer: The answer is B", "B", id="answer-the-answer-is"),
    # clauses
    pytest.param("Therefore, B is the correct answer.", "B", id="letter-is-the-answer"),
    pytest.param("**Option C** is the correct answer.", "C", id="bold-option-is-the-answer"),
    pytest.param("The best answer is D because the others are wrong.", "D", id="best-answer"),
    pytest.param("The answer is A because B and C ignore friction.", "A", id="clause-then-others"),
    pytest.param("The answer would be (A).", "A", id="would-be"),
    pytest.param("Therefore, the answer must be D.", "D", id="must-be"),
    pytest.param("The answer to this question is C.", "C", id="answer-to-this-question"),
    pytest.param("Let's evaluate.\n(A) is wrong.\n(B) is right.\n\nThe correct choice is B.", "B", id="correct-choice"),
    # a marker is a declaration, not any use of the word
    pytest.param("Answer: B\nThis answer is supported by C's flaw", "B", id="this-answer-is-not-a-marker"),
    pytest.param("Answer: B\n\nThe answer is supported by premise C.", "B", id="unreadable-clause-falls-back"),
    pytest.param("ANSWER: D\nI hope this answer is helpful.", "D", id="trailer-uses-the-word"),
    pytest.param("I think a good answer here requires care.\nAnswer: D", "D", id="prose-a-then-answer"),
    pytest.param("ANSWER: B\n\nExplanation: Paris is the capital; option C (London) is the UK's.", "B",
                 id="explanation-after"),
    pytest.param("The answer isn't A; it's D.\nAnswer: D", "D", id="negated-then-answer"),
    pytest.param("<think>It could be A... no, B.</think>\nAnswer: B", "B", id="think-tags"),
    pytest.param("After ruling out A and D, I'm left with B and C. Between them, C fits.\nAnswer: C", "C",
                 id="elimination-then-answer"),
    # letters inside a declaration that is not a bare letter
    pytest.param("Answer: C, not A.", "C", id="not-the-other"),
    pytest.param("Answer: I'd go with C, not A.", "C", id="chatty-with-negation"),
    pytest.param("Answer: The capital is Paris, option B.", "B", id="option-at-end"),
    pytest.param("Answer: Either A or C, but I lean towards C.", "C", id="pair-then-choice"),
    # a bare letter as the last line (no declaration)
    pytest.param("C", "C", id="bare"),
    pytest.param("(B)", "B", id="bare-paren"),
    pytest.param("**C**", "C", id="bare-bold"),
    pytest.param("c.", "C", id="bare-lowercase-dot"),
    pytest.param("Option D", "D", id="bare-option"),
    pytest.param("Paris is the capital of France.\nB. Paris", "B", id="bare-with-text"),
    # invalid
    pytest.param("Answer: none of them", None, id="no-letter"),
    pytest.param("Answer: Paris", None, id="option-text-only"),
    pytest.param("Answer: A or B", None, id="a-or-b"),
    pytest.param("The answer is between B and C.", None, id="between"),
    pytest.param("Answer: A and C are both partly true", None, id="two-letters"),
    pytest.param("Answer: B/C", None, id="slash"),
    pytest.param("Answer: D\n\nFinal answer: between B and C", None, id="hedged-last-declaration"),
    pytest.param("This is a good answer to a hard question.", None, id="article-a-in-prose"),
    pytest.param("A bit of both, honestly.", None, id="article-a-starts-line"),
    pytest.param("The answer is a bit unclear.", None, id="clause-article-a"),
    pytest.param("I would say C.", None, id="no-declaration-prose"),
    pytest.param("Here's my answer: C", "C", id="my-answer-mid-line"),
    pytest.param("The answer is the one about friction.\n\n(B)", "B", id="unreadable-clause-then-bare-letter"),
    pytest.param("The answer is not A.", None, id="negated-only"),
    pytest.param("Looking at each option:\nA. Incorrect.\nB. Incorrect.\nC. Correct.\nD. Incorrect.", None,
                 id="option-review-list"),
]


@pytest.mark.parametrize("reply,expected", MMLU_REPLIES)
def test_mmlu_letters(reply: str, expected: str | None) -> None:
    assert read_letter(reply) == expected


FOLIO_REPLIES = [
    # the formats this project's prompts and documentation name
    pytest.param("Final answer: Uncertain", "Uncertain", id="final-answer"),
    pytest.param("The premises do not settle it. The answer is unknown.", "Uncertain", id="clause-unknown"),
    pytest.param("The conclusion looked false at first.\nAnswer: True", "True", id="reasoning-then-answer"),
    pytest.param("**Answer:** False", "False", id="bold-marker"),
    pytest.param("End your reply with 'Answer: True', 'Answer: False' or 'Answer: Uncertain'.", None,
                 id="echoed-instruction"),
    pytest.param("\\boxed{\\text{False}}", "False", id="boxed-text"),
    pytest.param("$\\boxed{True}$", "True", id="boxed-inline-math"),
    # case and form
    pytest.param("Answer: false", "False", id="lowercase"),
    pytest.param("answer: TRUE", "True", id="uppercase"),
    pytest.param("Answer: FALSE", "False", id="uppercase-false"),
    pytest.param("ANSWER: uncertain", "Uncertain", id="inspect-style-lowercase"),
    pytest.param("final answer: true", "True", id="all-lowercase"),
    pytest.param("Answer: **Uncertain**", "Uncertain", id="bold-value"),
    pytest.param("The answer is: **False**.", "False", id="clause-bold"),
    pytest.param("Answer: [False]", "False", id="brackets"),
    pytest.param("Answer: \"True\"", "True", id="quotes"),
    pytest.param("answer: `Uncertain`", "Uncertain", id="backticks"),
    pytest.param("My answer: False", "False", id="my-answer"),
    pytest.param("> **Answer:** True", "True", id="blockquote"),
    pytest.param("- **Final answer:** Uncertain", "Uncertain", id="bullet-bold"),
    pytest.param("Answer:\n\nFalse", "False", id="next-line"),
    pytest.param("### Final Answer\n**Uncertain**", "Uncertain", id="heading-next-line"),
    pytest.param("Final Answer: The final answer is False. I hope it is correct.", "False", id="minerva-style"),
    pytest.param("Answer: True. (Premise 2 and premise 4 together imply it.)", "True", id="explanation-after"),
    pytest.param("Answer: Uncertain (the premises are silent about Rina).", "Uncertain", id="parenthetical"),
    pytest.param("The answer is: Uncertain.", "Uncertain", id="clause-colon"),
    pytest.param("The correct answer is False.", "False", id="correct-answer"),
    pytest.param("Therefore the answer would be True.", "True", id="would-be"),
    pytest.param("The final answer is **Uncertain** since nothing links Rina to the students.", "Uncertain",
                 id="clause-with-reason"),
    # synonyms of Uncertain
    pytest.param("Answer: Unknown", "Uncertain", id="unknown"),
    pytest.param("Answer: Cannot be determined", "Uncertain", id="cannot-be-determined"),
    pytest.param("Answer: Undetermined", "Uncertain", id="undetermined"),
    pytest.param("answer: indeterminate", "Uncertain", id="indeterminate"),
    pytest.param("The answer is unknown because the premises never mention Rina.", "Uncertain", id="unknown-because"),
    # the conclusion as the subject
    pytest.param("Therefore, the conclusion is False.", "False", id="conclusion-is"),
    pytest.param("The conclusion is therefore uncertain.", "Uncertain", id="conclusion-is-therefore"),
    pytest.param("Based on the premises, the conclusion is uncertain.", "Uncertain", id="based-on-premises"),
    pytest.param("The statement is false.", "False", id="statement-is"),
    pytest.param("The conclusion is true.\n\nWait, premise 6 says otherwise. The conclusion is false.", "False",
                 id="changed-mind"),
    pytest.param("The conclusion is True for Rina, so the answer is True.", "True", id="conclusion-then-answer"),
    # a marker is a declaration, not any use of the word
    pytest.param("ANSWER: False.\nThis answer is true to the premises", "False", id="this-answer-is-not-a-marker"),
    pytest.param("Answer: True\n\nThe answer is supported by premises 2 and 4, which are true.", "True",
                 id="unreadable-clause-falls-back"),
    pytest.param("Answer: Uncertain\nI hope this answer is true to the premises!", "Uncertain", id="trailer"),
    pytest.param("Answer: False — premise 3 says the opposite, so the conclusion is not true.", "False",
                 id="negated-conclusion-after"),
    pytest.param("The conclusion is not necessarily true.\nAnswer: Uncertain", "Uncertain", id="negated-then-answer"),
    pytest.param("At first I thought the answer is True. But premise 5 rules it out.\nFinal answer: False", "False",
                 id="changed-mind-final"),
    pytest.param("<think>Is it true? Premise 3... no, it's false.</think>\nAnswer: False", "False", id="think-tags"),
    pytest.param("So the conclusion must be false.\nAnswer: False", "False", id="must-be-then-answer"),
    pytest.param("Let's check. Premise 1: true. Premise 2: false.\nAnswer: Uncertain", "Uncertain",
                 id="labels-in-reasoning"),
    pytest.param("Answer: **False**\n\n**Explanation:** Premise 4 says no student is true to the rules.", "False",
                 id="bold-explanation"),
    pytest.param("The answer is False, because premise 3 contradicts it, so it cannot be true.", "False",
                 id="clause-then-reason"),
    # a label inside a declaration that is not a bare label
    pytest.param("Answer: It's true.", "True", id="its-true"),
    pytest.param("Answer: The conclusion follows, so True.", "True", id="follows-so"),
    pytest.param("Answer: The conclusion cannot be proven true or false from the premises, so Uncertain.",
                 "Uncertain", id="true-or-false-then-uncertain"),
    # a bare label as the last line (no declaration)
    pytest.param("False", "False", id="bare"),
    pytest.param("**True**", "True", id="bare-bold"),
    pytest.param("Uncertain.", "Uncertain", id="bare-dot"),
    pytest.param("Premise 1 says all birds fly. Tweety is a bird.\nSo Tweety flies.\nTrue", "True",
                 id="bare-after-reasoning"),
    # invalid
    pytest.param("It depends.", None, id="nothing"),
    pytest.param("Answer: Not true", None, id="negated-label"),
    pytest.param("Answer: True or False", None, id="true-or-false"),
    pytest.param("Answer: True/False", None, id="slash"),
    pytest.param("Answer: It is true or false depending on the reading.", None, id="hedged-pair"),
    pytest.param("Answer: Yes", None, id="yes-is-not-a-label"),
    pytest.param("The conclusion is not necessarily true.", None, id="negated-only"),
    pytest.param("So Tweety flies, which makes the conclusion true.", None, id="prose-without-declaration"),
    pytest.param("**Conclusion:** False", "False", id="conclusion-line"),
    pytest.param("Conclusion: Rina is a student.\n\nPremise 2 never mentions Rina.\n\nUncertain", "Uncertain",
                 id="restated-conclusion-then-bare-label"),
    pytest.param("Conclusion: Rina is a student.\n\nPremise 2 never mentions Rina.", None, id="restated-conclusion-only"),
]


@pytest.mark.parametrize("reply,expected", FOLIO_REPLIES)
def test_folio_labels(reply: str, expected: str | None) -> None:
    assert read_label(reply) == expected


@pytest.mark.parametrize("value,text", [
    (Fraction(18), "18"), (Fraction(-7), "-7"), (Fraction(3, 4), "0.75"), (Fraction(-5, 2), "-2.5"),
    (Fraction(1, 3), "1/3"), (Fraction(1000), "1000"), (Fraction(1, 8), "0.125"),
])
def test_numbers_are_written_back_exactly(value: Fraction, text: str) -> None:
    assert format_number(value) == text
    assert Fraction(text) == value


def test_a_degenerate_reply_is_read_in_linear_time() -> None:
    """Small models sometimes repeat one phrase thousands of times; reading such a reply must stay fast."""
    replies = ["The answer is " * 2000, "**" * 10000, "\\boxed{" * 3000, ("Answer: " + "x" * 50 + "\n") * 2000]
    started = time.perf_counter()
    for reply in replies:
        assert (read_number(reply), read_letter(reply), read_label(reply)) == (None, None, None)
    assert time.perf_counter() - started < 10


#: Replies whose marker words are spelt with the letters Python's case-insensitive matching takes for ASCII ones
#: (long s, Kelvin sign, dotless and dotted i), shouted, or missing: the shortcut that skips the marker patterns
#: must skip them exactly where they find nothing.
ODD_SPELLINGS = ["The anſwer is 7.", "OPTıON B is the correct answer", "My ANSWER: 12", "the final CHOİCE: C",
                 "Answer", "no marker here, just 3 and 4", "#### 9", "###### 9", "\\fbox{4}", "\\boxed{\\text{C}}",
                 "Final ANSWER:\n\n  -3", "the best optıon is (b)", "**Answer**: False", "Conclusion: True"]


def _every_pattern(reply: str, extra: tuple[re.Pattern[str], ...]) -> list[Declaration]:
    """The declarations found by running every pattern over the reply, whatever words it holds."""
    found = [Declaration(m.start(), answers._rest_of_line(reply, m.end()), opens=p is answers._HASHES)
             for p in (answers._LINE, answers._BOLD, answers._NAMED, answers._HASHES) for m in p.finditer(reply)]
    found += [Declaration(m.start(), answers._braced(reply, m.end()), opens=False) for m in answers._BOXED.finditer(reply)]
    found += [Declaration(m.start(), m.group(1)[:answers._REACH] if p.groups else answers._rest_of_line(reply, m.end()),
                          opens=True) for p in (answers._CLAUSE, *extra) for m in p.finditer(reply)]
    return sorted(found, key=lambda d: d.start)


@pytest.mark.parametrize("reply", [p.values[0] for p in GSM8K_REPLIES + MMLU_REPLIES + FOLIO_REPLIES] + ODD_SPELLINGS)
def test_declarations_are_those_every_pattern_finds(reply: str) -> None:
    for extra in ((), (answers._CONCLUSION,)):
        assert declarations(reply, extra) == _every_pattern(reply, extra)
