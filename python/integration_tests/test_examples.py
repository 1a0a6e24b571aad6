"""The three framework examples run as a user runs them, with the default model: a LangGraph
agent with LangMem's tools, a LangChain retrieval chain, an OpenAI Agents Runner with a session."""

import pathlib
import subprocess
import sys

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def run(name, tmp_path):
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / name), str(tmp_path / "store")],
        capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_langgraph_agent_keeps_and_finds_alices_memory_and_not_bobs(tmp_path):
    out = run("langgraph_agent.py", tmp_path)
    assert "alice's memory: Alice drinks green tea every morning" in out
    assert '"namespace":["memories","alice"]' in out
    assert "bob's memories: []" in out


def test_langchain_chain_retrieves_the_right_document(tmp_path):
    out = run("langchain_rag.py", tmp_path)
    assert "Context: The office closes at 6 pm on Fridays." in out


def test_openai_agents_runner_sees_the_history_memloop_kept(tmp_path):
    out = run("openai_agents_session.py", tmp_path)
    assert "I have seen 2 messages from you; the first was 'My cat is called Miso.'" in out
    assert "history items: 4" in out
