/*
 * TEMPORARY (issue 12): the two functions of main's orchestrator/study.h
 * that the report uses, until the study plug-in lands on main; this file
 * and study-units-tmp.c are deleted at that merge.  Static strings.
 */
#ifndef SEQORCH_STUDY_UNITS_TMP_H
#define SEQORCH_STUDY_UNITS_TMP_H

const char *study_unit(const char *name);
const char *study_unit_plural(const char *name);

#endif
