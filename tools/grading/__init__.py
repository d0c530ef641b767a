"""Grading the book's exercises: nbgrader's course configuration, a course builder, a submission
check for instructors, and otter-grader assignments generated from the same annotated notebooks."""
