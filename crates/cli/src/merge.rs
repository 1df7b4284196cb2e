//! `fencesim merge`: shards' check reports back into one report (schema versions checked
//! against the first part's), printed and written like `check`'s.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use crate::{
    colour,
    common::InputError,
    outputs::{check_outputs, print_failures, row, write_outputs, Columns, Outputs},
};

/// The largest check report `merge` reads (bytes): 256 MiB, the limit of a history file.
pub(crate) const MAX_REPORT_BYTES: u64 = 256 * 1024 * 1024;

pub(crate) fn merge(files: &[PathBuf], outputs: &Outputs) -> Result<bool, InputError> {
    check_outputs(outputs, files)?;
    let mut parts = Vec::with_capacity(files.len());
    let mut first: Option<(String, fencesim_verdict::ReportHeader)> = None;
    for file in files {
        let shown = file.display().to_string();
        let text = read_report(file)?;
        // Each part's schema version against the first's (naming both) before it is read.
        let header = fencesim_verdict::ReportHeader::of(&text, &shown).map_err(InputError)?;
        let (first_file, first_header) =
            first.get_or_insert_with(|| (shown.clone(), header.clone()));
        fencesim_verdict::same_schema(&[
            (first_file.as_str(), first_header.clone()),
            (shown.as_str(), header),
        ])
        .map_err(InputError)?;
        parts.push(fencesim_verdict::report_from_json(&text, &shown).map_err(InputError)?);
    }
    let report = fencesim_verdict::merge(parts).map_err(InputError)?;
    let columns = Columns::fit(report.scenarios.iter().map(|result| {
        let summary = &result.summary;
        (summary.scenario.as_str(), summary.expectation.clone())
    }));
    println!("{}", columns.header());
    for (result, verdict) in report.verdicts() {
        let line = row(result, verdict.label(), None, colour::enabled(), columns);
        println!("{line}");
    }
    write_outputs(&report, &BTreeMap::new(), &[], outputs)?;
    let failed = report.failed();
    print_failures(&failed, false);
    println!(
        "{} scenarios, {} failed",
        report.scenarios.len(),
        failed.len()
    );
    Ok(report.all_met)
}

/// A report to merge, read with the one bounded reader.
fn read_report(file: &Path) -> Result<String, InputError> {
    let bytes = fencesim_scenario::input::read_limited(file, MAX_REPORT_BYTES).map_err(|e| {
        InputError(format!(
            "{}: {}",
            file.display(),
            e.expected("a check report")
        ))
    })?;
    fencesim_scenario::input::into_text(bytes).map_err(|at| {
        InputError(format!(
            "{}:{}: expected a UTF-8 check report, got invalid UTF-8 at column {}",
            file.display(),
            at.line,
            at.column
        ))
    })
}
