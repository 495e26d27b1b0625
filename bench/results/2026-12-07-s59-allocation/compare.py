import json, sys
a=json.load(open(sys.argv[1])); e=json.load(open(sys.argv[2])); rs=int(sys.argv[3])
def rows(j):
    return {r['compression']: r for r in j['results'] if r['recordsize']==rs}
A=rows(a); E=rows(e)
for c in E:
    if c not in A: continue
    x=A[c]; y=E[c]
    print('%-8s psize %+6.2f%%  asize %+6.2f%%  used %+6.2f%%  pool_alloc %+6.2f%%  coded %d' % (c, 100*(x['psize']/y['psize']-1), 100*(x['asize']/y['asize']-1), 100*(x['used']/y['used']-1), 100*(x['pool_alloc']/y['pool_alloc']-1), x['timing']['codec_bytes']))
