/*
 * The Azure Service Bus SQL filter and rule-action language (the SQL-92 subset of service-bus-messaging-sql-filter
 * and service-bus-messaging-sql-rule-action). Keywords are case-insensitive. The parse tree is translated once,
 * when a rule is created or loaded, into the evaluator tree of io.buslane.engine.filter.sql (SqlCompiler); no
 * ANTLR object is used while messages are evaluated.
 */
grammar ServiceBusSql;

options { caseInsensitive = true; }

filter
    : expression EOF
    ;

action
    : statement (';' statement)* ';'? EOF
    ;

statement
    : SET property '=' expression                                               # setStatement
    | REMOVE property                                                           # removeStatement
    ;

// alternatives listed first bind tighter
expression
    : primary                                                                   # primaryExpression
    | op=('+' | '-') expression                                                 # unaryExpression
    | expression op=('*' | '/' | '%') expression                                # multiplicativeExpression
    | expression op=('+' | '-') expression                                      # additiveExpression
    | expression op=('=' | '<>' | '!=' | '>' | '>=' | '<' | '<=') expression    # comparisonExpression
    | property IS NOT? NULL                                                     # isNullExpression
    | expression NOT? LIKE pattern=STRING (ESCAPE escape=STRING)?               # likeExpression
    | expression NOT? IN '(' expression (',' expression)* ')'                   # inExpression
    | NOT expression                                                            # notExpression
    | expression AND expression                                                 # andExpression
    | expression OR expression                                                  # orExpression
    ;

primary
    : '(' expression ')'                                                        # parenthesized
    | EXISTS '(' property ')'                                                   # existsPredicate
    | name=IDENTIFIER '(' (expression (',' expression)*)? ')'                   # functionCall
    | constant                                                                  # constantPrimary
    | property                                                                  # propertyPrimary
    ;

constant
    : INTEGER                                                                   # integerConstant
    | DECIMAL                                                                   # decimalConstant
    | STRING                                                                    # stringConstant
    | TRUE                                                                      # trueConstant
    | FALSE                                                                     # falseConstant
    | NULL                                                                      # nullConstant
    | PARAMETER                                                                 # parameterConstant
    ;

property
    : identifier ('.' identifier)?
    ;

identifier
    : IDENTIFIER
    | DELIMITED
    | QUOTED
    ;

AND     : 'AND';
OR      : 'OR';
NOT     : 'NOT';
IS      : 'IS';
NULL    : 'NULL';
LIKE    : 'LIKE';
ESCAPE  : 'ESCAPE';
IN      : 'IN';
EXISTS  : 'EXISTS';
TRUE    : 'TRUE';
FALSE   : 'FALSE';
SET     : 'SET';
REMOVE  : 'REMOVE';

INTEGER    : DIGIT+;
DECIMAL    : (DIGIT+ '.' DIGIT* | '.' DIGIT+) EXPONENT? | DIGIT+ EXPONENT;
STRING     : '\'' (~'\'' | '\'\'')* '\'';
DELIMITED  : '[' (~']' | ']]')* ']';
QUOTED     : '"' (~'"' | '""')* '"';
IDENTIFIER : [\p{L}_] [\p{L}\p{Nd}_]*;
PARAMETER  : '@' [\p{L}_] [\p{L}\p{Nd}_]*;

WS : [ \t\r\n\f]+ -> skip;

fragment DIGIT    : [0-9];
fragment EXPONENT : 'E' [+-]? DIGIT+;
