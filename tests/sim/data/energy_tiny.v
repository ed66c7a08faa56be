// A tiny design for the energy-counting tests (tests/sim/test_energy.py): an accumulator, a
// 256 x 8 memory (kept as an SRAM macro: read and write addresses differ, a dual-port macro)
// and a registered read.
module tiny(input clk, input [7:0] a, input we, input re, output reg [7:0] q, output reg [7:0] rd);
  reg [7:0] mem [0:255];
  initial q = 0;
  always @(posedge clk) begin
    q <= q + a;
    if (we) mem[q] <= a;
    if (re) rd <= mem[a];
  end
endmodule
