# per.py CALLGRIND_OUT: the allocator's instructions per nvm_alloc call without chunk zeroing
# (inclusive nvm_alloc minus inclusive take_free_chunks, over the calls callgrind_annotate lists)
import re,subprocess,sys
f=sys.argv[1]
out=subprocess.run(['callgrind_annotate','--inclusive=yes','--tree=calling',f],capture_output=True,text=True).stdout
def incl(fn):
    for l in out.splitlines():
        m=re.match(r'\s*([\d,]+) \([\d. %]+\)\s+\*\s+(\S+):(\S+) \[',l)
        if m and m.group(3)==fn: return int(m.group(1).replace(',',''))
    return 0
def calls(fn):
    n=0
    for l in out.splitlines():
        m=re.search(r'>\s+\S+:'+re.escape(fn)+r' \(([\d,]+)x\)',l)
        if m: n+=int(m.group(1).replace(',',''))
    return n
a=incl('nvm_alloc'); t=incl('take_free_chunks'); fr=incl('nvm_free'); ca=calls('nvm_alloc'); cf=calls('nvm_free')
print(f"{f}: nvm_alloc {ca} calls, incl {a}, take_free_chunks incl {t}; Ir per allocation without chunk zeroing {(a-t)/max(ca,1):.1f}; nvm_free {cf} calls, Ir per free {fr/max(cf,1):.1f}")
