"""Uses of the metrics that both sides have but no OSWorld task in the set calls.

OSWorld exports these and we register them, yet no task file uses them, so the task scan
gives them no case. Each gets one made-up use here, in the same form as a task's
evaluator (getter types as OSWorld's tasks spell them), built from the metric's inputs:
files of the kind it reads, a rules dict of the keys it reads, and for value results a few
``values`` worth trying beside the rule-derived ones.
"""

from __future__ import annotations

from parity.metric_cases_tasks import MetricUse


def _file(ext: str, getter: str = "vm_file") -> dict[str, object]:
    return {"type": getter, "path": f"/home/user/file{ext}", "dest": f"file{ext}"}


def _rule(rules: dict[str, object]) -> dict[str, object]:
    return {"type": "rule", "rules": rules}


def synthetic_uses(known: set[str]) -> list[MetricUse]:
    """A use for each metric of the table below that ``known`` (the task-used names) lacks."""
    table: list[tuple[str, dict[str, object], dict[str, object] | None]] = [
        (
            "check_enabled_experiments",
            {"type": "enabled_experiments", "values": [["a@1", "b"], ["b@1", "a"], ["a@1"], []]},
            _rule({"type": "names", "names": ["a", "b"]}),
        ),
        ("check_html_background_image", _file(".html"), _rule({"type": "value", "value": "bg.jpg"})),
        ("check_slide_numbers_color", _file(".pptx"), None),
        (
            "check_strikethrough",
            _file(".pptx"),
            _rule({"slide_index_s": [0], "shape_index_s": [1], "paragraph_index_s": [0]}),
        ),
        (
            "check_text_enlarged",
            {"type": "vm_command_line", "values": ["1.25", "1.0", "2", "0.9"]},
            None,
        ),
        (
            "compare_answer",
            {"type": "vm_command_line", "values": ["42", " 42\n", "43"]},
            _rule({"expected": "42"}),
        ),
        ("compare_contains_image", _file(".docx"), _file(".docx", "cloud_file")),
        ("compare_docx_lines", _file(".docx"), _file(".docx", "cloud_file")),
        (
            "fuzzy_match",
            {"type": "vm_command_line", "values": ["hello world", "hello"]},
            _rule({"expected": "hello world"}),
        ),
        ("is_included_all_json_objects", _file(".json", "cloud_file"), _file(".json")),
        (
            "check_file_exists",
            {"type": "vm_command_line", "values": ["/etc", "/etc/", "/nonexistent", ""]},
            _rule("hostname"),
        ),
        ("compare_highlighted_text", _file(".docx"), _file(".docx", "cloud_file")),
        ("compare_terminal_and_txt", _file(".txt"), _rule("hello world\n")),
    ]
    return [
        MetricUse(task="synthetic", metric=name, options={}, result=result, expected=expected)
        for name, result, expected in table
        if name not in known
    ]
