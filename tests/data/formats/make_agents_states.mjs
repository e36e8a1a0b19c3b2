// Record RunState snapshots of real @openai/agents-core runs (a scripted Model, no network).
import { Agent, Runner, tool, shellTool, applyPatchTool, setTracingDisabled } from '@openai/agents-core';
import { z } from 'zod';
setTracingDisabled(true);
const BIG = Array.from({ length: 60 }, (_, n) => `${String(n).padStart(4)}  line ${n} of the file\n`).join('');
const usage = { requests: 1, inputTokens: 100, outputTokens: 10, totalTokens: 110 };
class Scripted {
  constructor(script) { this.script = script; this.k = 0; }
  async getResponse(request) {
    const output = this.script[Math.min(this.k, this.script.length - 1)]; this.k += 1;
    return { output, usage, responseId: `resp_${this.k}` };
  }
  async *getStreamedResponse() { throw new Error('no'); }
}
const say = (text) => ({ type: 'message', role: 'assistant', status: 'completed', id: 'm',
                         content: [{ type: 'output_text', text }] });
const readFile = tool({ name: 'read_file', description: 'Read a file', parameters: z.object({ path: z.string() }),
                        execute: async () => BIG });
const shell = shellTool({ shell: { run: async (action) => ({ output: [
  { stdout: 'total 3\n' + BIG, stderr: 'warn: x\n', outcome: { type: 'exit', exitCode: 0 } }] }) } });
const patch = applyPatchTool({ editor: {
  createFile: async () => ({ status: 'completed', output: 'created' }),
  updateFile: async () => ({ status: 'completed', output: 'patched a.py\n' + BIG }),
  deleteFile: async () => ({ status: 'completed', output: 'deleted' }) } });
const script = [
  [{ type: 'function_call', id: 'fc_1', callId: 'call_read', name: 'read_file', arguments: '{"path":"a.py"}', status: 'completed' }],
  [{ type: 'shell_call', id: 'sh_1', callId: 'call_shell', status: 'completed', action: { commands: ['ls -la'] } }],
  [{ type: 'apply_patch_call', id: 'ap_1', callId: 'call_patch', status: 'completed',
     operation: { type: 'update_file', path: 'a.py', diff: '@@\n-x\n+y\n' } }],
  [say('done')],
];
const runner = new Runner({ tracingDisabled: true });
const full = await runner.run(new Agent({ name: 'coder', instructions: 'You code.', model: new Scripted(script),
                                          tools: [readFile, shell, patch] }), 'look around', { maxTurns: 20 });
const del = tool({ name: 'delete_file', description: 'Delete', parameters: z.object({ path: z.string() }),
                   needsApproval: true, execute: async () => 'deleted' });
const paused = await runner.run(new Agent({ name: 'coder', instructions: 'You code.', model: new Scripted([
  [{ type: 'function_call', id: 'fc_9', callId: 'call_del', name: 'delete_file', arguments: '{"path":"a.py"}', status: 'completed' }],
  [say('ok')]]), tools: [del] }), 'delete a.py');
if (!paused.interruptions?.length) throw new Error('no approval pending');
process.stdout.write(JSON.stringify({ full: JSON.parse(full.state.toString()), approvals: JSON.parse(paused.state.toString()) }, null, 1));
