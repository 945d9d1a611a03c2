"""Workload traced by make.sh: threads, pipes, sockets, signals, children that exit,
get killed, stop and continue, and a thread that execs. Runs in about 0.5 s."""
import os, resource, signal, socket, subprocess, sys, tempfile, threading, time

resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

# A pipe read by threads while the main thread writes: unfinished/resumed reads.
r, w = os.pipe()
def reader():
    os.read(r, 3)
threads = [threading.Thread(target=reader) for _ in range(2)]
[t.start() for t in threads]
time.sleep(0.02)
os.write(w, b"abc")
os.write(w, b"def")
[t.join() for t in threads]

# Hostile file names and data: quotes, >, newline, ' = ', ')' and binary bytes.
d = tempfile.mkdtemp(prefix='we"ird>dir ')
name = os.path.join(d, 'x) = 1 <0.5>\n')
fd = os.open(name, os.O_CREAT | os.O_WRONLY, 0o600)
os.write(fd, b'a) = "q" \\ \t\x00\xff\x7f' + bytes(range(40)))
os.close(fd)
with open(name, 'rb') as f:
    f.read()
os.unlink(name)
os.rmdir(d)
try:
    os.stat('/nonexistent/x')
except OSError:
    pass

# TCP on 127.0.0.1 and a UNIX socket.
srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen()
c = socket.create_connection(srv.getsockname()); a, _ = srv.accept()
c.sendall(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n'); a.recv(100)
a.close(); c.close(); srv.close()
path = os.path.join(tempfile.gettempdir(), 'tlsgap-strace-%d.sock' % os.getpid())
u = socket.socket(socket.AF_UNIX); u.bind(path); u.listen()
uc = socket.socket(socket.AF_UNIX); uc.connect(path); ua, _ = u.accept()
uc.send(b'x'); ua.recv(1)
ua.close(); uc.close(); u.close(); os.unlink(path)

# A timer signal with a handler interrupting a blocking read.
class Alarm(Exception):
    pass
def on_alarm(*_):
    raise Alarm
signal.signal(signal.SIGALRM, on_alarm)
signal.setitimer(signal.ITIMER_REAL, 0.02)
r2, w2 = os.pipe()
try:
    os.read(r2, 1)
except Alarm:
    pass
threading.Timer(0.02, lambda: os.write(w2, b'z')).start()
os.read(r2, 1)

# Children: exit 3, killed by SIGKILL, SIGSEGV, stopped and continued mid-sleep,
# and a thread that execs (the leader is superseded).
subprocess.run(['/bin/sh', '-c', 'cat /etc/hostname >/dev/null; exit 3'])
p = subprocess.Popen(['/bin/sleep', '5']); time.sleep(0.05); p.kill(); p.wait()
p = subprocess.Popen([sys.executable, '-I', '-S', '-c',
                      'import ctypes; ctypes.string_at(0)']); p.wait()
p = subprocess.Popen(['/bin/sleep', '0.2']); time.sleep(0.05)
p.send_signal(signal.SIGSTOP); time.sleep(0.02); p.send_signal(signal.SIGCONT); p.wait()
subprocess.run([sys.executable, '-I', '-S', '-c',
                'import os, threading; t = threading.Thread(target=lambda: os.execv("/bin/true", ["true"])); t.start(); t.join()'])
