/*
 * xxl_graph_driver.c — the one driver of the graph SQL functions
 * (xxl_graph_driver.h): destination, edges into the engine, the engine
 * run under an operator, its rows out.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "pg/graph/xxl_graph_driver.h"

TupleDesc
xxl_graph_desc(int n, const char *const *names, const Oid *types)
{
	TupleDesc	desc = CreateTemplateTupleDesc(n);

	for (int i = 0; i < n; i++)
		TupleDescInitEntry(desc, (AttrNumber) (i + 1), names[i], types[i], -1, 0);
	return desc;
}

XxlOutput *
xxl_graph_output(FunctionCallInfo fcinfo, const char *target, TupleDesc desc)
{
	if (target != NULL)
		return xxl_output_into_table(target, desc);
	return xxl_output_to_caller(fcinfo, xxl_output_caller_desc(fcinfo));
}

uint64
xxl_graph_drive(const XxlGraphCall *c)
{
	const XxlGraphFamily *f = c->family;
	XxlEdgeReader *reader = xxl_edges_open_reduced(c->edges, c->fname, c->needs, c->reduce);
	XxlOperator *op = xxl_operator_begin(c->op_name);
	xxl_resources res = xxl_operator_resources(op);
	xxl_error	err;
	void	   *core;
	XxlEdge		read[256];
	int			nread;
	Datum		values[XXL_GRAPH_MAX_COLS];
	bool		isnull[XXL_GRAPH_MAX_COLS] = {false};
	uint64		n = 0;

	xxl_operator_check_memory(op, c->fname, f->min_memory());
	xxl_error_clear(&err);
	core = f->create(c->config, &res, xxl_edges_estimate(reader), &err);
	if (core == NULL)
		xxl_raise_error(&err, c->fname);
	xxl_operator_attach(op, core, f->destroy, f->collect);
	xxl_operator_describe(op, NULL, xxl_edges_estimate(reader));

	/* a batch per call into the engine, not a call per edge */
	xxl_edges_count_into(reader, &op->rows_in);
	while ((nread = xxl_edges_read(reader, read, lengthof(read))) > 0)
		if (f->put(c->config, core, read, nread, op->rows_in - nread) != XXL_OK)
			xxl_raise_error(f->error(core), c->fname);
	xxl_edges_report(reader, op);
	xxl_edges_close(reader);

	xxl_operator_phase(op, XXL_PHASE_MERGE);
	if (f->run(core) != XXL_OK)
		xxl_raise_error(f->error(core), c->fname);

	xxl_operator_phase(op, XXL_PHASE_OUTPUT);
	if (c->out != NULL)
		xxl_output_caller_memory(c->out, res.memory, f->memory_held(core));
	for (;;)
	{
		int			got = f->next(c->config, core, values);

		if (got < 0)
			xxl_raise_error(f->error(core), c->fname);
		if (got == 0)
			break;
		if (c->out == NULL)
			n = (uint64) DatumGetInt64(values[0]);
		else
		{
			xxl_output_put_values(c->out, values, isnull);
			op->rows_out++;
		}
		CHECK_FOR_INTERRUPTS();
	}
	if (c->out != NULL)
		n = op->rows_out = xxl_output_finish(c->out);
	else
		op->rows_out = 1;
	xxl_operator_end(op);
	return n;
}
