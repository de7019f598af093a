"""OSWorld's metric functions, registered lazily by name.

A metric is a pure function ``(result, expected=None, **options) -> Score``: ``result``
and ``expected`` are what the getters produced (a local file path, a list of paths, a
command output, the task's ``rules`` dict...), ``options`` is the task's ``options``
object. ``None`` for an input means that its getter produced nothing, and the metric
scores 0 with a reason. Metrics never talk to the environment and never import or
evaluate anything a task or the guest supplies.

Each name maps to a ``"module:function"`` entry imported on first use, so importing this
package loads no heavy library.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pytest_osworld.registry import Registry

__all__ = ["METRICS", "METRIC_TABLE", "infeasible"]

#: Every metric: its name (as task files use it) and the module that defines it.
METRIC_TABLE: tuple[tuple[str, str], ...] = (
    ("check_accessibility_tree", "general"),
    ("check_auto_saving_time", "slides"),
    ("check_brightness_decrease_and_structure_sim", "gimp"),
    ("check_config_status", "gimp"),
    ("check_contrast_increase_and_structure_sim", "gimp"),
    ("check_csv", "general"),
    ("check_direct_json_object", "general"),
    ("check_enabled_experiments", "chrome"),
    ("check_file_exists", "gimp"),
    ("check_file_exists_and_structure_sim", "gimp"),
    ("check_font_size", "chrome"),
    ("check_global_key_play_pause", "vlc"),
    ("check_gnome_favorite_apps", "basic_os"),
    ("check_green_background", "gimp"),
    ("check_highlighted_words", "docs"),
    ("check_history_deleted", "chrome"),
    ("check_html_background_image", "vscode"),
    ("check_image_file_size", "gimp"),
    ("check_image_mirror", "gimp"),
    ("check_image_size", "gimp"),
    ("check_image_stretch_and_center", "slides"),
    ("check_include_exclude", "general"),
    ("check_italic_font_size_14", "docs"),
    ("check_json", "general"),
    ("check_json_keybindings", "vscode"),
    ("check_json_settings", "vscode"),
    ("check_left_panel", "slides"),
    ("check_line_number", "general"),
    ("check_list", "general"),
    ("check_moved_jpgs", "basic_os"),
    ("check_mp3_meta", "others"),
    ("check_one_instance_when_started_from_file", "vlc"),
    ("check_page_number_colors", "slides"),
    ("check_palette_and_structure_sim", "gimp"),
    ("check_pdf_pages", "pdf"),
    ("check_play_and_exit", "vlc"),
    ("check_presenter_console_disable", "slides"),
    ("check_python_file_by_test_suite", "vscode"),
    ("check_qt_bgcone", "vlc"),
    ("check_qt_max_volume", "vlc"),
    ("check_qt_minimal_view", "vlc"),
    ("check_qt_slider_colours", "vlc"),
    ("check_saturation_increase_and_structure_sim", "gimp"),
    ("check_slide_numbers_color", "slides"),
    ("check_slide_orientation_Portrait", "slides"),
    ("check_strikethrough", "slides"),
    ("check_structure_sim", "gimp"),
    ("check_structure_sim_resized", "gimp"),
    ("check_structure_sim_with_threshold", "gimp"),
    ("check_tabstops", "docs"),
    ("check_text_enlarged", "basic_os"),
    ("check_textbox_on_leftside", "gimp"),
    ("check_thunderbird_filter", "thunderbird"),
    ("check_thunderbird_folder", "thunderbird"),
    ("check_thunderbird_prefs", "thunderbird"),
    ("check_transition", "slides"),
    ("check_triangle_position", "gimp"),
    ("compare_answer", "vscode"),
    ("compare_archive", "chrome"),
    ("compare_audios", "vlc"),
    ("compare_conference_city_in_order", "table"),
    ("compare_config", "vscode"),
    ("compare_contains_image", "docs"),
    ("compare_csv", "table"),
    ("compare_docx_files", "docs"),
    ("compare_docx_files_and_ignore_new_lines", "docs"),
    ("compare_docx_images", "docs"),
    ("compare_docx_lines", "docs"),
    ("compare_docx_tables", "docs"),
    ("compare_epub", "others"),
    ("compare_font_names", "docs"),
    ("compare_highlighted_text", "docs"),
    ("compare_htmls", "chrome"),
    ("compare_image_list", "gimp"),
    ("compare_image_text", "docs"),
    ("compare_images", "vlc"),
    ("compare_line_spacing", "docs"),
    ("compare_pdf_images", "chrome"),
    ("compare_pdfs", "chrome"),
    ("compare_pptx_files", "slides"),
    ("compare_python_pure_text", "general"),
    ("compare_references", "docs"),
    ("compare_result_files", "vscode"),
    ("compare_subscript_contains", "docs"),
    ("compare_table", "table"),
    ("compare_terminal_and_txt", "general"),
    ("compare_text_file", "vscode"),
    ("compare_unique_train_records", "docs"),
    ("compare_videos", "vlc"),
    ("compare_zip_files", "vscode"),
    ("contains_page_break", "docs"),
    ("diff_text_file", "general"),
    ("evaluate_colored_words_in_tables", "docs"),
    ("evaluate_presentation_fill_to_rgb_distance", "slides"),
    ("evaluate_strike_through_last_paragraph", "docs"),
    ("exact_match", "general"),
    ("file_contains", "general"),
    ("find_default_font", "docs"),
    ("fuzzy_match", "general"),
    ("fuzzy_place_math", "general"),
    ("has_page_numbers_in_footers", "docs"),
    ("is_added_to_steam_cart", "chrome"),
    ("is_cookie_deleted", "chrome"),
    ("is_expected_active_tab", "chrome"),
    ("is_expected_active_tab_approximate", "chrome"),
    ("is_expected_bookmarks", "chrome"),
    ("is_expected_installed_extensions", "chrome"),
    ("is_expected_search_query", "chrome"),
    ("is_expected_tabs", "chrome"),
    ("is_expected_url_pattern_match", "chrome"),
    ("is_extension_installed", "vscode"),
    ("is_first_line_centered", "docs"),
    ("is_in_list", "general"),
    ("is_in_vm_clickboard", "basic_os"),
    ("is_included_all_json_objects", "general"),
    ("is_shortcut_on_desktop", "chrome"),
    ("is_utc_0", "basic_os"),
    ("is_vlc_fullscreen", "vlc"),
    ("is_vlc_playing", "vlc"),
    ("is_vlc_recordings_folder", "vlc"),
    ("literal_match", "general"),
    ("match_in_list", "general"),
    ("run_sqlite3", "general"),
)

METRICS: Registry[Callable[..., Any]] = Registry("metric")

#: Message of :func:`infeasible`, which the evaluator handles itself.
INFEASIBLE_MESSAGE = (
    "'infeasible' is not a metric function: the evaluator scores an infeasible task "
    "1 when the agent's last action is FAIL, and never calls it"
)


def infeasible(result: Any = None, expected: Any = None, **options: Any) -> Any:
    """Placeholder for the ``infeasible`` pseudo-metric; calling it is an error."""
    raise TypeError(INFEASIBLE_MESSAGE)


for _name, _module in METRIC_TABLE:
    METRICS.register(_name, f"pytest_osworld.evaluators.metrics.{_module}:{_name}")
METRICS.register("infeasible", "pytest_osworld.evaluators.metrics:infeasible")
