# nbgrader configuration for a course that uses the book's chapters: copy this file into the
# course directory (`python -m tools.grading.course COURSE` does, and fills source/ as well).
# One assignment per chapter: source/<label>/<notebook>.ipynb, where <label> is the prefix of the
# chapter's exercise labels (bottleneck, soft_attention, ..., see instructors.md).
# Read by nbgrader >= 0.9 (a Python file, run by traitlets).
from nbgrader.preprocessors import ClearHiddenTests, GetGrades
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor

c = get_config()  # noqa: F821 - provided by traitlets when nbgrader reads this file

c.CourseDirectory.course_id = "attention"

# The student version: the notebook itself, without header or footer; a solution region becomes
# `raise NotImplementedError()` (the def line and the `name = ...` lines around it stay).
c.ClearSolutions.code_stub = {"python": "raise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# Autograding executes every submission top to bottom. nbgrader's default limit of 30 s per cell
# stops chapter 6's training cells (30-60 s on a 2-core CPU) and every cell after them fails with
# a NameError; 600 s leaves room for a slow machine.
c.Execute.timeout = 600
c.Execute.interrupt_on_timeout = True
c.Execute.kernel_name = "python3"

# A submission whose check cells were deleted, or saved by a front end that dropped their nbgrader
# metadata, gets the check cells back from the gradebook (they are appended where they were lost:
# see instructors.md, and run `python -m tools.grading.check_submissions COURSE ASSIGNMENT` first).
c.OverwriteCells.add_missing_cells = True

# Feedback is made from the autograded notebook, which holds the hidden tests again: remove them
# before the HTML is written, or every student reads the hidden tests in full.
c.GenerateFeedback.preprocessors = [GetGrades, ClearHiddenTests, CSSHTMLHeaderPreprocessor]
