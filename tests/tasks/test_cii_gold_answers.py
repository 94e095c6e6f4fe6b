"""CII gold answers that are not a plain option letter: normalised where they name one letter, else the load stops
naming every such doc id (docs/cii.md, deviation 10); never dropped, so the table's n is every question."""

import pytest

from hanyi.data.cii import CHECKED_FIELDS, check_rows, gold_letter


def _dataset(answers):
    import datasets

    rows = []
    for i, answer in enumerate(answers):
        row = {f: "x" for f in CHECKED_FIELDS} | {"id": f"test-{i}", "answer": answer, "correct_option": ""}
        rows.append(row | {"image_type": "海报(Poster)", "rhetoric": "隐喻"})
    return datasets.Dataset.from_list(rows)


@pytest.mark.parametrize(
    "answer, letter",
    [("C", "C"), ("c", "C"), (" C ", "C"), ("Ｃ", "C"), ("f\n", "F"), ("C,E", None), (" X ", None), ("3", None),
     ("", None), (None, None), ("G", None), ("CE", None)],
)  # fmt: skip
def test_gold_letter(answer, letter):
    assert gold_letter(answer) == letter


def test_a_gold_answer_spelling_a_letter_otherwise_is_scored_as_that_letter():
    from hanyi.tasks.cii.loading import checked

    ds = checked(_dataset(["A", "c", " B ", "D"]))
    assert ds["answer"] == ["A", "C", "B", "D"] and len(ds) == 4  # n: every question
    rows = [{**row, "image": True} for row in _dataset(["A", "c"]).to_list()]
    assert check_rows(rows)[1] == {"normalised_answer": ["test-1"]}


def test_a_gold_answer_naming_no_letter_stops_the_load_naming_every_id():
    from hanyi.tasks.cii.loading import checked

    answers = ["A", "c", "C,E", "B", " X ", "3", "D", "E", "F", "A", "B", "C"]
    with pytest.raises(ValueError) as err:
        checked(_dataset(answers))
    message = str(err.value)
    assert "\n" not in message
    assert "3 gold answer(s) name no option letter A-F (doc ids: test-2, test-4, test-5)" in message
    assert "docs/cii.md" in message
