"""The quick and the full test set (README, "Run the tests"), and progress for the long tests.

Loaded with `-p tests.testsets` (`python -m pytest` puts the current folder on `sys.path`):

* marks the tests listed in `SLOW` `slow`: the quick set is
  `-m "not slow and not tilelang and not recipes"` (at most 3 minutes on a 2-core machine);
  the full set is everything;
* before each long test (`slow`, `tilelang`, `recipes`) writes one line naming it and about how
  long it takes, so a run that sits at one percentage for minutes says what it is doing (under
  `pytest -n`, the controller writes it as the worker's setup report arrives, with the worker).

`SLOW`: node ids and their seconds in `python -m pytest -m "not tilelang and not recipes"
--durations=100` on the project's 2-core machine shared with other work (2026-12-02), every test
of 3 s and more, then what the quick set's own `--durations` runs showed (5 s and more with the
load at 7, then 1.3 s and more); a test that becomes slow belongs here (or gets faster).
"""
from __future__ import annotations

import pytest

SLOW: dict[str, int] = {
    "tests/test_first_hour.py::test_on_the_corpora_only_non_performance_findings_decide_the_exit_code[upstream]": 280,
    "tests/test_sarif_config.py::test_baseline_write_then_report_only_new": 252,
    "tests/test_security.py::test_a_planted_grammar_cache_pickle_is_not_loaded": 251,
    "tests/test_sarif_config.py::test_baseline_with_paths_tells_copies_apart": 147,
    "tests/test_robustness.py::test_file_over_its_memory_budget_is_a_finding": 92,
    "tests/test_first_hour.py::test_on_the_corpora_only_non_performance_findings_decide_the_exit_code[realworld]": 82,
    "tests/test_sarif_config.py::test_stale_baseline_entries_are_reported_and_pruned": 72,
    "tests/test_robustness.py::test_jobs_are_capped_to_the_cores": 70,
    "tests/test_sarif_config.py::test_every_builtin_rule_has_a_documentation_page_and_rule_prints_it": 56,
    "tests/test_sarif_config.py::test_inline_suppression_on_the_line_and_the_line_before": 51,
    "tests/test_sarif_config.py::test_sarif_is_schema_valid_and_has_what_github_reads": 39,
    "tests/test_sarif_config.py::test_unused_or_ruleless_suppression_is_reported": 38,
    "tests/test_walk_bounds.py::test_a_hostile_pattern_does_not_hang_the_walk[extend-exclude]": 31,
    "tests/test_sarif_config.py::test_sarif_respects_githubs_result_limit": 25,
    "tests/test_walk_bounds.py::test_a_lowering_worker_is_killed_with_every_process_it_started[True]": 21,
    "tests/test_sarif_config.py::test_python_line_first_path_map_and_python_suppressions": 19,
    "tests/test_cache.py::test_findings_identical_with_and_without_cache_over_all_fixtures": 18,
    "tests/test_walk_bounds.py::test_a_lowering_worker_is_killed_with_every_process_it_started[False]": 14,
    "tests/test_robustness.py::test_seeded_fuzz_never_loses_a_file_or_crashes": 13,
    "tests/test_walk_bounds.py::test_the_same_answers_as_pathspec_on_random_patterns": 12,
    "tests/test_bad_input.py::test_each_bad_file_gets_a_finding_and_good_files_still_report": 11,
    "tests/test_security.py::test_grammar_cache_is_private_and_nothing_is_written_to_the_temp_folder": 10,
    "tests/test_python_lines.py::test_no_python_location_lies_past_the_end_of_its_file": 10,
    "tests/test_checks.py::test_zero_errors_on_every_clean_fixture": 8,
    "examples/plugin-example/tests/test_cpasync_width.py::test_plugin_is_listed_with_its_version": 6,
    "examples/plugin-example/tests/test_cpasync_width.py::test_findings_in_json_and_sarif_with_its_own_help_link": 6,
    "tests/test_robustness.py::test_fifos_are_skipped_with_a_finding_not_blocked_on": 6,
    "tests/test_lsp_watch.py::test_watch_checks_again_after_a_change": 6,
    "tests/test_robustness.py::test_json_and_sarif_are_byte_identical_across_hash_seeds_job_counts_and_path_orders": 5,
    "tests/test_security.py::test_no_file_outside_the_project_root_is_opened": 5,
    "examples/plugin-example/tests/test_cpasync_width.py::test_third_party_output_format_is_a_format_choice": 5,
    "examples/plugin-example/tests/test_cpasync_width.py::test_its_configuration_table_reaches_it": 5,
    "tests/test_cache_confinement.py::test_check_watch_with_a_hostile_cache_dir_deletes_nothing": 4,
    "tests/test_hostile_input.py::test_nothing_is_imported_from_the_current_folder[script]": 4,
    "tests/test_hostile_input.py::test_nothing_is_imported_from_the_current_folder[module]": 4,
    "tests/test_sarif_config.py::test_fingerprints_are_stable_across_runs_and_when_lines_move": 3,
    "tests/test_new_user.py::test_a_new_users_first_session": 3,
    "tests/test_checks.py::test_worker_processes_give_the_same_report_as_one_process": 3,
    # 5 s and more in the quick set's own run with the load at 7 (two workers: about twice the idle time)
    "tests/test_checks.py::test_known_redundant_barriers_and_waits_are_the_only_warnings": 55,
    "tests/test_hostile_input.py::test_symlink_loop_named_on_the_command_line_is_unreadable_file": 16,
    "tests/test_cache_confinement.py::test_clean_with_cache_dir_src_keeps_the_projects_own_folders": 16,
    "tests/test_hostile_input.py::test_nothing_is_imported_from_the_current_folder[module-empty-pythonpath]": 13,
    "tests/test_hostile_input.py::test_configuration_cannot_switch_a_budget_off[time-budget]": 13,
    "tests/test_hostile_input.py::test_nothing_is_imported_from_the_current_folder[script-empty-pythonpath]": 13,
    "tests/test_quantifiers.py::test_every_claim_of_a_kernel_can_be_applied_together[row_sum_sm_80_s4]": 13,
    "tests/test_hostile_input.py::test_configuration_cannot_switch_a_budget_off[memory-budget]": 12,
    "tests/test_cache_confinement.py::test_clean_with_cache_dir_up_the_tree_removes_nothing_of_the_users": 11,
    "tests/test_quantifiers.py::test_every_claim_of_a_kernel_can_be_applied_together[row_sum_sm_80_s3]": 11,
    "tests/test_cache_confinement.py::test_a_linked_shard_under_the_projects_cache_dir_deletes_nothing[j1-untagged]": 10,  # noqa: E501
    "tests/test_cache.py::test_concurrent_runs_share_a_cache": 10,
    "tests/test_cache_confinement.py::test_clean_removes_only_entries_and_lists_them_in_a_dry_run": 10,
    "tests/test_cache_confinement.py::test_a_linked_shard_under_the_projects_cache_dir_deletes_nothing[j1-tagged]": 10,
    "tests/test_first_hour.py::test_performance_findings_alone_exit_zero": 10,
    "tests/test_hostile_input.py::test_hostile_file_names_are_printed_visibly[args0]": 9,
    "tests/test_bench.py::test_bench_without_a_gpu_says_so_in_one_line": 9,
    "tests/test_hostile_input.py::test_hostile_file_names_are_printed_visibly[args1]": 9,
    "tests/test_cache_confinement.py::test_a_cache_root_that_is_a_link_is_refused_with_a_warning": 9,
    "tests/test_robustness.py::test_a_worker_that_dies_costs_only_its_file": 8,
    "tests/test_cache_confinement.py::test_a_linked_shard_under_the_projects_cache_dir_deletes_nothing[j2-tagged]": 8,
    "tests/test_cache_confinement.py::test_a_linked_shard_under_the_projects_cache_dir_deletes_nothing[j2-untagged]": 8,
    "tests/test_quantifiers.py::test_every_claim_of_a_kernel_can_be_applied_together[row_sum_sm_80_s2]": 8,
    "tests/test_hostile_input.py::test_cr_only_file_quotes_the_right_line_and_honours_its_suppression": 8,
    "tests/test_hostile_input.py::test_configuration_cannot_loosen_the_size_limit": 7,
    "tests/test_cache_confinement.py::test_a_project_cannot_place_the_cache_outside_its_folder[sub/../../victim]": 7,
    "tests/test_walk_bounds.py::test_a_configuration_linked_out_of_the_project_is_not_read": 7,
    "tests/test_cache_confinement.py::test_a_project_cannot_place_the_cache_outside_its_folder[../victim]": 7,
    "tests/test_cache_confinement.py::test_a_project_cannot_place_the_cache_outside_its_folder[/]": 7,
    "tests/test_docs.py::test_rule_pages_are_what_the_generator_writes": 7,
    "tests/test_cli.py::test_output_file_and_fail_on": 7,
    "tests/test_security.py::test_clean_removes_the_grammar_cache": 6,
    "tests/test_hostile_input.py::test_hostile_file_names_are_printed_visibly[args8]": 6,
    "tests/test_cache_confinement.py::test_a_project_cannot_place_the_cache_outside_its_folder[../..]": 6,
    "tests/test_cache.py::test_a_killed_run_keeps_the_entries_of_the_files_it_finished": 6,
    "tests/test_symbolic.py::test_the_solver_gives_the_enumerators_answer_on_random_accesses": 6,
    "tests/test_hostile_input.py::test_hostile_file_names_are_printed_visibly[args5]": 6,
    "tests/test_hostile_input.py::test_hostile_file_names_are_printed_visibly[args2]": 6,
    "tests/test_cache.py::test_corrupt_entries_heal": 6,
    "tests/test_cache.py::test_only_the_edited_file_is_analysed_again": 6,
    "tests/test_bench.py::test_bench_renders_recorded_runs_and_plots_without_a_gpu": 6,
    "tests/test_walk_bounds.py::test_watch_stays_in_the_project_and_follows_no_link": 5,
    "tests/test_cache.py::test_no_cache_writes_nothing_and_config_can_turn_it_off": 5,
    # 1.3 s and more in the quick set's run after that (one process, load 4-6)
    "tests/test_first_hour.py::test_suppressed_findings_are_in_sarif_as_in_source": 5,
    "tests/test_bench.py::test_measure_config_wiring_with_a_fake_gpu": 4,
    "tests/test_quantifiers.py::test_every_claim_of_a_kernel_can_be_applied_together[gemv_sm_80_s4]": 4,
    "tests/test_hostile_input.py::test_hostile_file_names_are_printed_visibly[args3]": 3,
    "tests/test_cli_parity.py::test_select_by_plugin_name_all_and_repeated_flags": 3,
    "tests/test_first_hour.py::test_sarif_uris_never_climb_and_outside_files_have_no_base": 2,
    "tests/test_hostile_input.py::test_hostile_file_names_are_printed_visibly[args6]": 2,
    "tests/test_quantifiers.py::test_every_claim_of_a_kernel_can_be_applied_together[flash_attn_fwd_sm_80_s2]": 2,
    "tests/test_hostile_input.py::test_waiting_does_not_use_up_the_cpu_budget": 2,
    "tests/test_walk_bounds.py::test_an_invalid_pattern_is_a_usage_error_in_config_and_skipped_in_gitignore": 2,
    "tests/test_cli.py::test_exit_zero_quiet_output_format_alias_and_force_color": 2,
    "tests/test_security.py::test_a_plugin_writing_to_the_descriptor_or_a_child_process_is_captured_too": 2,
    "tests/test_user_terms.py::test_ci_formats_write_repository_relative_python_paths": 2,
    "tests/test_rule_cases.py::test_a_rule_reports_exactly_its_expected_lines[wait-too-deep/wait_collapsed.mutant]": 2,
    "tests/test_quantifiers.py::test_every_claim_of_a_kernel_can_be_applied_together[gemv_sm_80_s3]": 2,
    "tests/test_bad_input.py::test_syntax_error_points_at_first_bad_token": 2,
    "tests/test_first_hour.py::test_stdin_with_a_filename": 2,
    "tests/test_lsp_units.py::test_findings_never_land_past_the_kernel": 2,
    "tests/test_security.py::test_a_plugin_finding_outside_the_project_is_not_opened_either": 1,
    "tests/test_security.py::test_a_hostile_line_name_yields_no_control_character_in_any_format[python]": 1,
    "tests/test_docs.py::test_precision_script_counts_a_folder": 1,
    "tests/test_checks.py::test_mutant_is_reported_at_the_right_line[runtime_trip_drop_release]": 1,
    "tests/test_hostile_input.py::test_configuration_may_tighten_a_budget": 1,
    "examples/plugin-example/tests/test_cpasync_width.py::test_min_bytes_setting_lowers_the_bar": 1,
    # added with this file, measured alone on the same machine
    "tests/test_python_lines.py::test_no_sarif_region_or_related_location_lies_past_its_file": 30,
    "tests/test_python_lines.py::test_upstream_corpus_python_lines_are_statements_tilelang_named": 15,
    "tests/test_python_lines.py::test_jit_hook_warnings_lie_inside_the_kernel_file": 5,
    "tests/test_user_terms.py::test_concise_python_prints_no_duplicate_line_and_names_the_variants": 15,
    "tests/test_user_terms.py::test_every_format_shows_and_counts_the_same_findings": 6,
}
LONG_MARKS = ("slow", "tilelang", "recipes")


def pytest_configure(config: pytest.Config) -> None:
    _CONFIG[:] = [config]
    config.addinivalue_line("markers", "slow: takes seconds, not milliseconds (tests/testsets.py); the quick set "
                                       "skips it")


def _base(nodeid: str) -> str:
    return nodeid.split("[", 1)[0]


_LONG: dict[str, str] = {}          # node id -> what the line before it says
_PROPERTY = "pipelint-long-test"
_CONFIG: list[pytest.Config] = []


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    bases = {_base(n) for n in SLOW if "[" not in n}
    _CONFIG[:] = [config]
    for item in items:
        if item.nodeid in SLOW or item.nodeid in bases or _base(item.nodeid) in bases:
            item.add_marker(pytest.mark.slow)
        marks = [m for m in LONG_MARKS if item.get_closest_marker(m) is not None]
        if marks:
            took = SLOW.get(item.nodeid) or SLOW.get(_base(item.nodeid))
            _LONG[item.nodeid] = "/".join(marks) + (f", about {took} s" if took else "")
            # under `pytest -n` the workers collect, the controller writes: it reads this from
            # the setup report (`pytest_runtest_logreport`)
            item.user_properties.append((_PROPERTY, _LONG[item.nodeid]))


def pytest_runtest_logstart(nodeid: str, location: tuple) -> None:
    """One line naming a long test as it starts (outside output capture, unlike setup)."""
    _say(nodeid, _LONG.get(nodeid))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Under `pytest -n` (pytest-xdist): the line, as a worker's long test finishes its setup."""
    if report.when == "setup" and report.nodeid not in _LONG:
        said = dict(report.user_properties).get(_PROPERTY)
        if said:
            gateway = getattr(getattr(report, "node", None), "gateway", None)
            _say(report.nodeid, str(said) + (f", {gateway.id}" if gateway is not None else ""))


def _say(nodeid: str, said: str | None) -> None:
    reporter = _CONFIG[0].pluginmanager.get_plugin("terminalreporter") if _CONFIG and said else None
    if reporter is None:
        return
    writer = getattr(reporter, "_tw", None)
    if writer is not None and getattr(writer, "width_of_current_line", 0):
        writer.line()               # after the progress dots of the tests before it
    reporter.write_line(f"  ... {nodeid} ({said})")
