// Drives the gate-level `tiny` (its energy ports energy_clk/energy_en exposed) for
// tests/sim/test_energy.py; +scenario=N picks one:
//   0: 40 counted cycles with quiet inputs (a = 0: the accumulator holds);
//   1: 40 cycles with the accumulator running (a = 1) but not counted (energy_en = 0);
//   2: 40 counted cycles with the accumulator running, 10 writes then 7 reads;
//   3: as 2 with a = 3 (more bits toggle).
`timescale 1ns/1ps
module tb;
  reg clk = 0, en = 0, we = 0, re = 0;
  reg [7:0] a = 0;
  integer scenario = 0;
  always #5 clk = ~clk;
  wire [7:0] q, rd;
  tiny dut(.clk(clk), .a(a), .we(we), .re(re), .q(q), .rd(rd), .energy_clk(clk),
           .energy_en(en));
  initial begin
    if (!$value$plusargs("scenario=%d", scenario)) scenario = 0;
    repeat (4) @(negedge clk);
    a = (scenario == 0) ? 0 : (scenario == 3 ? 3 : 1);
    en = (scenario != 1);
    if (scenario >= 2) begin
      we = 1; repeat (10) @(negedge clk); we = 0;
      re = 1; repeat (7) @(negedge clk); re = 0;
      repeat (23) @(negedge clk);
    end else
      repeat (40) @(negedge clk);
    en = 0;
    @(negedge clk);
    $finish;
  end
endmodule
