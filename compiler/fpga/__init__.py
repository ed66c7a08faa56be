"""The FPGA backend (thesis §6.3, Fig. 6.6, Table 6.1 "BRAM + LUTs"; docs/fpga.md): an
application's unified-buffer implementation and schedule as an application-specific FPGA design,
described as plain data (:mod:`.design`) that ``ubgen.fpga.app`` builds. :mod:`.build` makes the
description, :mod:`.host` the host's input words and expected output words."""
